"""Output serializers of the series, the dataset history and the dataset diff (comparisons.selectors.series,
history and diff): each field names a key the selector's dict carries."""

from rest_framework import serializers

from comparisons.api.published_serializers import PublishedFigureSerializer
from comparisons.api.serializers import BandSerializer
from evalapp.fields import declare, names, number, shares, text

# series and history


class RunPointSerializer(serializers.Serializer):
    """A run as a point: score and n are null (and `blind` true) for a run you label blind."""

    run_id = serializers.CharField()
    system = serializers.CharField(allow_blank=True)
    score = number()
    n = serializers.IntegerField(allow_null=True)
    started_at = serializers.CharField()
    evaluator_config_hash = text()
    blind = serializers.BooleanField()


class SeriesPointSerializer(RunPointSerializer):
    dataset_hash = text()
    backfilled = serializers.BooleanField()


class RescoredBySerializer(serializers.Serializer):
    judge_version = serializers.IntegerField()
    judge = serializers.CharField(help_text="judge name and version number, e.g. `span-judge v1`")
    n = serializers.IntegerField(help_text="judge-graded questions re-scored by this version's stored verdicts")


class NotRescoredSerializer(serializers.Serializer):
    qid = serializers.CharField()
    reason = serializers.CharField(help_text="why not, and the grade_run command that would fill the gap")


class RescoreSerializer(serializers.Serializer):
    run_id = serializers.CharField()
    dataset_hash = serializers.CharField()
    resolved = serializers.BooleanField()
    score = number()
    n = serializers.IntegerField()
    missing_answers = serializers.IntegerField()
    ungradable = serializers.IntegerField()
    regraded_by_rule = serializers.IntegerField()
    rescored_by = RescoredBySerializer(many=True)
    not_rescored = NotRescoredSerializer(many=True)
    started_at = serializers.CharField()


class SegmentSerializer(serializers.Serializer):
    dataset_hash = text()
    evaluator_config_hash = text()
    version = serializers.IntegerField(allow_null=True)
    examples = serializers.IntegerField(allow_null=True)
    points = SeriesPointSerializer(many=True)
    backfilled = RescoreSerializer(many=True)


class DatasetChangeSerializer(serializers.Serializer):
    from_version = serializers.IntegerField(allow_null=True)
    to_version = serializers.IntegerField(allow_null=True)
    from_examples = serializers.IntegerField(allow_null=True)
    to_examples = serializers.IntegerField(allow_null=True)
    added = serializers.IntegerField(required=False, help_text="when both versions are known")
    removed = serializers.IntegerField(required=False)
    modified = serializers.IntegerField(required=False)
    unchanged = serializers.IntegerField(required=False)


class EvaluatorChangeSerializer(serializers.Serializer):
    from_version = text()
    to_version = text()


for _change in (DatasetChangeSerializer, EvaluatorChangeSerializer):
    declare(_change, **{"from": text(), "to": text()})


class BreakSerializer(serializers.Serializer):
    after_run = serializers.CharField()
    before_run = serializers.CharField()
    dataset = DatasetChangeSerializer(required=False)
    evaluator_config = EvaluatorChangeSerializer(required=False)
    changed = names()
    text = serializers.CharField(allow_blank=True)


class LineSerializer(serializers.Serializer):
    system = serializers.CharField(allow_blank=True)
    segments = SegmentSerializer(many=True)
    breaks = BreakSerializer(many=True)


class SeriesSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    systems = names()
    backfill = serializers.BooleanField()
    criterion = serializers.CharField(
        required=False, help_text="present when each point is scored by this criterion's pass rule"
    )
    lines = LineSerializer(many=True)
    published = PublishedFigureSerializer(many=True, help_text="the dataset's published figures, flagged or not")


def _decomposition_fields(**kwargs) -> dict:
    return {
        "old_aggregate": number(**kwargs),
        "new_aggregate": number(**kwargs),
        "delta": number(**kwargs),
        "n_old": serializers.IntegerField(**kwargs),
        "n_new": serializers.IntegerField(**kwargs),
        "n_intersection": serializers.IntegerField(**kwargs),
        "intersection_old": number(**kwargs),
        "intersection_new": number(**kwargs),
        "contributions": shares(**kwargs),
        "old_sums": shares(**kwargs),
        "new_sums": shares(**kwargs),
    }


class PartitionPointsSerializer(serializers.Serializer):
    modified = serializers.FloatField()
    added = serializers.FloatField()
    removed = serializers.FloatField()


class MovementReadingSerializer(serializers.Serializer):
    """The intersection re-score in words: against the run-to-run band, and whether the dataset's own
    partitions account for the movement (points are percentage points)."""

    band = BandSerializer(allow_null=True)
    intersection_points = number(help_text="the score's movement on the unchanged questions")
    intersection_beyond_band = serializers.BooleanField(allow_null=True)
    dataset_points = serializers.FloatField(help_text="modified + added + removed contributions")
    partition_points = PartitionPointsSerializer()
    unexplained_points = serializers.FloatField(help_text="the unchanged questions' contribution to the movement")
    explained_within_band = serializers.BooleanField(allow_null=True)
    differs = names(help_text="pinned fields in which the two runs differ")
    words = serializers.CharField()


class DecompositionSerializer(serializers.Serializer):
    """How an aggregate moved between two versions, partition by partition (the contributions sum to delta)."""


declare(DecompositionSerializer, **_decomposition_fields(), reading=MovementReadingSerializer(required=False))


class MovementSerializer(serializers.Serializer):
    """A system's movement from the previous version: the decomposition, or `error` when it cannot be made."""

    system = serializers.CharField(allow_blank=True)
    old_run = serializers.CharField()
    new_run = serializers.CharField()
    error = serializers.CharField(required=False)


declare(MovementSerializer, **_decomposition_fields(required=False), reading=MovementReadingSerializer(required=False))


class CeilingSerializer(serializers.Serializer):
    system = serializers.CharField(allow_blank=True)
    old_run = serializers.CharField()
    old_score = serializers.FloatField()
    n_kept = serializers.IntegerField()
    n_added = serializers.IntegerField()
    ceiling = serializers.FloatField()
    new_run = text()
    new_score = number()
    exceeds_ceiling = serializers.BooleanField()
    differs = names(help_text="pinned fields in which the latest new run differs (then no new score is set against it)")


class UnpairedSerializer(serializers.Serializer):
    """A system whose runs on the two versions never agree on their pinned fields: nothing is compared."""

    system = serializers.CharField(allow_blank=True)
    old_run = serializers.CharField()
    new_run = serializers.CharField()
    differs = names()
    words = serializers.CharField()


class RelabelAuditLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(allow_blank=True)
    status = serializers.CharField()
    url = serializers.CharField()


class HistoryVersionSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    dataset_hash = serializers.CharField()
    source = serializers.CharField(allow_blank=True)
    note = serializers.CharField(allow_blank=True)
    created_at = serializers.CharField()
    examples = serializers.IntegerField()
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    modified = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    audit_url = text()
    relabel_audits = RelabelAuditLinkSerializer(many=True)
    modified_by = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="how many modified questions changed each scored field, or only metadata",
    )
    modified_words = serializers.CharField(allow_blank=True, help_text="modified_by in words, zeros left out")
    runs = RunPointSerializer(many=True)
    ceilings = CeilingSerializer(many=True)
    movements = MovementSerializer(many=True)
    unpaired = UnpairedSerializer(many=True)


class HistorySerializer(serializers.Serializer):
    dataset = serializers.CharField()
    versions = HistoryVersionSerializer(many=True)


# dataset diff


class DiffCeilingSerializer(serializers.Serializer):
    ceiling = number()
    reason = serializers.CharField(required=False, help_text="why there is no ceiling")
    n_kept = serializers.IntegerField(required=False)
    n_added = serializers.IntegerField(required=False)
    old_score_on_kept = serializers.FloatField(required=False)
    new_aggregate = serializers.FloatField(required=False)
    exceeds_ceiling = serializers.BooleanField(required=False)
    words = serializers.CharField(required=False)


class ModifiedBySerializer(serializers.Serializer):
    """The modified qids by what changed: the scored fields, or only metadata (sorted qids)."""

    expected = names()
    gold_chunk_id = names()
    gold_doc_id = names()
    gold_text = names()
    grading = names()
    question = names()
    stratum = names()
    metadata_only = names(help_text="none of the fields above changed: no score can move")


class DatasetDiffSerializer(serializers.Serializer):
    """The `diff_datasets` object: the four partitions (sorted qids) and, given a run on each version,
    the movement and (when questions were added) its ceiling."""

    dataset = serializers.CharField()
    old = serializers.CharField()
    new = serializers.CharField()
    added = names()
    removed = names()
    modified = names()
    unchanged = names()
    modified_fields = serializers.DictField(
        child=names(), help_text="qid -> the record keys whose value changed (a key on one side only counts)"
    )
    modified_by = ModifiedBySerializer()
    movement = DecompositionSerializer(required=False)
    ceiling = DiffCeilingSerializer(required=False)
