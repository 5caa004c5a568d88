"""Input and output serializers of a dataset's criteria (labels beyond correct/incorrect): a definition in
and out, and the annotators' agreement on one criterion over a run."""

from rest_framework import serializers

from evalapp.fields import counts, interval, number, text
from evalapp.serializers import AgreementSerializer


class CriterionInSerializer(serializers.Serializer):
    criterion = serializers.CharField(max_length=100, help_text="lower-case letters, digits, - and _")
    kind = serializers.ChoiceField(choices=["binary", "categorical", "ordinal"])
    values = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        max_length=100,
        help_text="the values, worst first for ordinal; binary's are correct, incorrect",
    )
    pass_rule = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=300, help_text="e.g. '>=4', 'in good|fine'"
    )
    guideline = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=10_000,
        help_text="what annotators read beside the control; a change is a new version",
    )


class CriterionSerializer(serializers.Serializer):
    criterion = serializers.CharField()
    version = serializers.IntegerField()
    kind = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField())
    pass_rule = serializers.CharField(source="pass", allow_null=True)
    guideline = serializers.CharField(allow_blank=True)
    passing = serializers.ListField(child=serializers.CharField(), allow_null=True)
    created_at = serializers.CharField()
    created_by = serializers.CharField(allow_null=True)


class CriterionSetSerializer(CriterionSerializer):
    status = serializers.ChoiceField(choices=["created", "new version", "unchanged"])


class CriterionPairSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    raw_agreement = number()
    kappa = number(help_text="weighted by `weights`")
    weights = serializers.CharField(allow_null=True)
    reason = text()
    confusion = counts()


class CriterionAgreementObjectSerializer(AgreementSerializer):
    per_pair = serializers.DictField(child=CriterionPairSerializer(), help_text='"a/b" (usernames) -> agreement')


class CriterionMultiRaterSerializer(serializers.Serializer):
    n_items = serializers.IntegerField()
    raters = serializers.IntegerField()
    fleiss_kappa = number()
    krippendorff_alpha = number()
    alpha_ci95 = interval(allow_null=True)
    metric = serializers.CharField()
    warnings = serializers.ListField(child=serializers.CharField())


class CriterionPassRuleSerializer(serializers.Serializer):
    rule = serializers.CharField(help_text="the criterion's pass rule, e.g. '>=4'")
    n = serializers.IntegerField()
    raw_agreement = number()
    kappa = number()
    reason = text()
    confusion = counts()


class CriterionAgreementSerializer(serializers.Serializer):
    run = serializers.CharField()
    criterion = serializers.CharField()
    version = serializers.IntegerField()
    kind = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField())
    weights = serializers.CharField()
    answers = serializers.IntegerField(help_text="answers with a value on the criterion")
    single_valued = serializers.IntegerField(help_text="of them, those with one value only (no pair)")
    agreed = serializers.IntegerField(help_text="answers whose annotators all gave the same value (its final value)")
    disputed = serializers.IntegerField(help_text="answers whose values differ: no final value until adjudicated")
    disputed_qids = serializers.ListField(child=serializers.CharField(), help_text="the first 100 of them, by qid")
    agreement = CriterionAgreementObjectSerializer()
    multi_rater = CriterionMultiRaterSerializer()
    pass_rule = CriterionPassRuleSerializer(allow_null=True)
