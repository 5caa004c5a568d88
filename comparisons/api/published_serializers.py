"""Output serializers of the published figures (comparisons.selectors.published)."""

from rest_framework import serializers

from evalapp.fields import names, number, text


class CorrectionSerializer(serializers.Serializer):
    """A correction kept beside a published figure (comparisons.models.Correction)."""

    id = serializers.IntegerField()
    shown_score = serializers.FloatField()
    comparable_score = number(help_text="the run re-scored on the latest version; null when it cannot be")
    comparable_n = serializers.IntegerField(allow_null=True)
    comparable_dataset_hash = serializers.CharField()
    cause = serializers.CharField()
    unresolved = serializers.CharField(allow_blank=True, help_text="why there is no comparable figure, if none")
    created_at = serializers.CharField()
    created_by = text()


class PublishedFigureSerializer(serializers.Serializer):
    """A published figure with its status (comparisons.selectors.published)."""

    id = serializers.IntegerField()
    run_id = serializers.CharField()
    system = serializers.CharField()
    dataset = text()
    score = serializers.FloatField()
    n = serializers.IntegerField()
    dataset_hash = serializers.CharField()
    evaluator_config_hash = serializers.CharField(allow_blank=True)
    shown_to = serializers.CharField()
    shown_at = serializers.CharField()
    note = serializers.CharField(allow_blank=True)
    created_by = text()
    comparable = serializers.BooleanField(help_text="false once a later population makes a later number non-comparable")
    causes = names(help_text="what makes it non-comparable, in words")
    latest_dataset_hash = text()
    corrections = CorrectionSerializer(many=True)


class PublishedListSerializer(serializers.Serializer):
    figures = PublishedFigureSerializer(many=True)
