"""Output serializers of the comparisons API: each field names a key the selector's dict carries
(comparisons.selectors), so /api/schema/ says what a script receives. One module for all of them, past
400 lines on purpose: the compare, history and series answers share their run and interval shapes, and
one place to read them is what a client author needs."""

from rest_framework import serializers

from comparisons.api.published_serializers import PublishedFigureSerializer
from evalapp.fields import counts, declare, interval, names, number, shares, text
from evalapp.serializers import ComparedLeftOutSerializer, LeftOutSerializer


class RunSummarySerializer(serializers.Serializer):
    """A run's identifying and pinned fields (comparisons.selectors.runs.run_summary)."""

    run_id = serializers.CharField()
    system = serializers.CharField(allow_blank=True)
    dataset = text()
    dataset_hash = text()
    version = serializers.IntegerField(allow_null=True)
    started_at = text()
    model_snapshot = text()
    prompt_hash = text()
    evaluator_version = text()
    evaluator_config_hash = text()
    harness_commit = text()
    index_id = text()


class GradingSummarySerializer(serializers.Serializer):
    answered = serializers.IntegerField()
    scored = serializers.IntegerField()
    score = number()
    sources = counts(help_text="grade source -> answers")
    ungraded = counts(help_text="reason -> answers")
    disputed_left_out = LeftOutSerializer(help_text="unscored because their human labels disagree")


class PairingSerializer(serializers.Serializer):
    paired = serializers.IntegerField()
    dropped = serializers.IntegerField()
    answered_only_a = serializers.IntegerField()
    answered_only_b = serializers.IntegerField()
    unscored = serializers.IntegerField()


class GradingPairSerializer(serializers.Serializer):
    a = GradingSummarySerializer()
    b = GradingSummarySerializer()


class StratumComparisonSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    a_score = number()
    b_score = number()
    diff_points = number()
    ci95 = interval(allow_null=True)
    b_only = serializers.IntegerField()
    a_only = serializers.IntegerField()
    resolvable_gap_points = number()
    regressions = serializers.IntegerField(help_text="how many")
    ci95_method = serializers.CharField(help_text="bootstrap_percentile or newcombe_hybrid_score (under 10 discordant)")
    mcnemar_p = serializers.FloatField(help_text="exact McNemar p-value (two-sided binomial on the discordant counts)")
    detectable_gap_80 = number(
        help_text="points: the gap found with 80% power at alpha 0.05; null with none discordant"
    )


class CriterionPassRuleComparisonSerializer(serializers.Serializer):
    rule = serializers.CharField(help_text="the criterion's pass rule, e.g. >= 4")
    n = serializers.IntegerField()
    a_score = number(required=False)
    b_score = number(required=False)
    diff_points = number(required=False)
    ci95 = interval(allow_null=True, required=False)
    ci95_method = serializers.CharField(required=False)
    ci95_reason = text(required=False)
    regressions = names(required=False, help_text="qids A passed and B did not, sorted")
    reason = text(required=False, help_text="why nothing is compared (no shared final value)")


class CriterionComparisonSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="ordinal, categorical or binary")
    version = serializers.IntegerField(help_text="the criterion version compared on (the latest)")
    values = names(help_text="the scale, in order")
    n = serializers.IntegerField(help_text="questions with a final human value in both runs")
    mean_a = number(required=False)
    mean_b = number(required=False)
    diff = number(required=False, help_text="mean of B - A per question, in the scale's units")
    ci95 = interval(allow_null=True, required=False, help_text="paired bootstrap; null with a reason")
    se = number(required=False)
    improved = serializers.IntegerField(required=False)
    worsened = serializers.IntegerField(required=False)
    tied = serializers.IntegerField(required=False)
    reason = text(required=False)
    scale = serializers.CharField(
        required=False, help_text="values (the values are numbers) or positions (1 for the first value)"
    )
    pass_rule = CriterionPassRuleComparisonSerializer(required=False)


class StaleGoldReportSerializer(serializers.Serializer):
    dataset_hash = serializers.CharField()
    checked = serializers.IntegerField()
    stale = serializers.IntegerField()
    stale_share = serializers.FloatField()
    stale_qids = names(help_text="the first 100")
    moved = serializers.IntegerField()
    stale_in_paired = serializers.IntegerField(allow_null=True)
    stale_in_discordant = serializers.IntegerField(
        required=False,
        help_text="stale labels on questions the two runs answer differently: those can move the difference",
    )


class BandSerializer(serializers.Serializer):
    """The run-to-run band of repeat runs, in points."""

    runs = names()
    n_runs = serializers.IntegerField()
    mean_points = number()
    sd_points = number()
    lo_points = number()
    hi_points = number()
    width_points = number()


declare(BandSerializer, **{"from": serializers.CharField(help_text='"given" or "repeats of run a|b"')})


class VerdictSerializer(serializers.Serializer):
    status = serializers.CharField()
    words = serializers.CharField()
    clears_interval = serializers.BooleanField()
    clears_band = serializers.BooleanField(allow_null=True)
    n_needed_for_this_gap = serializers.IntegerField(allow_null=True)


class AttributionSerializer(serializers.Serializer):
    """Crossed runs (comparisons.selectors.crossed): the one pinned factor the movement belongs to, or why none."""

    attributed = serializers.BooleanField(
        help_text="exactly one pinned field differs, on one dataset version, with no question dropped"
    )
    factor = text(help_text="the one pinned field that differs (null when none or several do)")
    a = text(help_text="A's value of the factor")
    b = text(help_text="B's value of the factor")
    factors = names(help_text="every pinned field in which B differs from A")
    diff_points = number()
    ci95 = interval(allow_null=True)
    words = serializers.CharField()


class CompareSerializer(serializers.Serializer):
    """The `compare` command's object (INTERFACES.md, "Comparisons") with the pairing, grading, strata,
    stale gold, band and verdict."""

    n = serializers.IntegerField()
    a_score = number()
    b_score = number()
    diff_points = number()
    ci95 = interval(allow_null=True)
    naive_ci95 = interval(allow_null=True)
    se_points = number()
    b_only = serializers.IntegerField()
    a_only = serializers.IntegerField()
    regressions = names(help_text="qids A answered right and B wrong, sorted")
    resolvable_gap_points = number(
        help_text="the 95% interval's half-width: a real gap that size is found half the time"
    )
    ci95_method = serializers.CharField(help_text="bootstrap_percentile or newcombe_hybrid_score (under 10 discordant)")
    ci95_reason = text(help_text="why the score interval was used; null for the bootstrap")
    mcnemar_p = serializers.FloatField(help_text="exact McNemar p-value (two-sided binomial on the discordant counts)")
    detectable_gap_80 = number(help_text="points: the gap found with 80% power at alpha 0.05 (normal approximation)")
    resolvable_gap_note = serializers.CharField()
    stratum_regressions = names(help_text="strata whose 95% interval lies wholly below zero")
    run_a = RunSummarySerializer()
    run_b = RunSummarySerializer()
    dataset_hash_match = serializers.BooleanField()
    pairing = PairingSerializer()
    grading = GradingPairSerializer()
    disputed_left_out = ComparedLeftOutSerializer(help_text="questions unpaired because a side's labels disagree")
    differs = serializers.DictField(
        child=serializers.ListField(child=text()), help_text="pinned field -> [A's, B's] where they differ"
    )
    attribution = AttributionSerializer()
    discordant_rate = serializers.FloatField()
    per_stratum = serializers.DictField(child=StratumComparisonSerializer(), allow_null=True)
    stale_gold = serializers.DictField(child=StaleGoldReportSerializer(), help_text="dataset hash -> report")
    criteria = serializers.DictField(
        child=CriterionComparisonSerializer(),
        required=False,
        help_text="criterion -> the comparison on its final human values (ordinal: the paired mean difference; "
        "with a pass rule: its paired comparison); absent when the datasets define none",
    )
    band = BandSerializer(allow_null=True)
    verdict = VerdictSerializer()
    iters = serializers.IntegerField()
    seed = serializers.IntegerField()
    warnings = names()


class ComparedAnswerSerializer(serializers.Serializer):
    run_id = serializers.CharField()
    answer = text()
    correct = serializers.BooleanField(allow_null=True)
    final_verdict = text()
    retrieved = serializers.JSONField(allow_null=True)
    prompt_chunks = serializers.JSONField(allow_null=True)
    graded = serializers.BooleanField(allow_null=True)
    graded_by = text()


class CompareQuestionSerializer(serializers.Serializer):
    qid = serializers.CharField()
    question = text()
    stratum = text()
    gold_passage = text()
    gold_passage_from = text()
    gold_chunk_id = text()
    gold_text = text()
    expected = text()
    grading = text()
    a = ComparedAnswerSerializer()
    b = ComparedAnswerSerializer()


# failures


class FailureCountsSerializer(serializers.Serializer):
    not_retrieved = serializers.IntegerField()
    retrieved_not_in_prompt = serializers.IntegerField()
    generation = serializers.IntegerField()
    no_gold = serializers.IntegerField()


class FailureLabelsSerializer(serializers.Serializer):
    not_retrieved = serializers.CharField()
    retrieved_not_in_prompt = serializers.CharField()
    generation = serializers.CharField()
    no_gold = serializers.CharField()


class FailureStratumSerializer(serializers.Serializer):
    scored = serializers.IntegerField()
    failing = serializers.IntegerField()
    counts = FailureCountsSerializer()


class FailureSerializer(serializers.Serializer):
    qid = serializers.CharField()
    stratum = serializers.CharField()
    category = serializers.CharField()
    rank = serializers.IntegerField(allow_null=True)
    gold_chunk_id = text()
    gold_chunk_gone = serializers.BooleanField(
        help_text="no live chunk holds the gold text under gold_chunk_id: the gold document and text decided"
    )
    matched_by = text(help_text="chunk_id, gold_text or gold_document: how the gold passage was found; null if not")


class FailuresSerializer(serializers.Serializer):
    run = RunSummarySerializer()
    criterion = text(help_text="the criterion whose pass rule decided failing (null: the answers' grades)")
    answered = serializers.IntegerField()
    scored = serializers.IntegerField()
    failing = serializers.IntegerField()
    stratum = text()
    counts = FailureCountsSerializer()
    labels = FailureLabelsSerializer()
    ranks_not_in_prompt = serializers.DictField(
        child=serializers.IntegerField(), help_text="rank -> failures retrieved there but not in the prompt"
    )
    per_stratum = serializers.DictField(child=FailureStratumSerializer())
    ungraded = serializers.DictField(child=serializers.IntegerField(), help_text="reason -> answers")
    disputed_left_out = LeftOutSerializer(help_text="unscored because their human labels disagree")
    failures = FailureSerializer(many=True)


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


# planner


class PlanRowSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    resolvable_gap_points = serializers.FloatField()
    detectable_gap_80 = serializers.FloatField()


class PlanSerializer(serializers.Serializer):
    discordant_rate = serializers.FloatField()
    discordant_rate_from = serializers.CharField()
    n = serializers.IntegerField(allow_null=True)
    resolvable_gap_points = number()
    detectable_gap_80 = number(help_text="points: the gap found with 80% power at alpha 0.05 (normal approximation)")
    resolvable_gap_note = serializers.CharField()
    gap_points = number()
    n_needed = serializers.IntegerField(allow_null=True)
    table = PlanRowSerializer(many=True)
