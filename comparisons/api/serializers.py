"""Output serializers of the comparisons API: each field names a key the selector's dict carries
(comparisons.selectors), so /api/schema/ says what a script receives. The compare, failures and planner
answers are here; the series, history and dataset diff answers in history_serializers, which share the
run band shape defined here."""

from rest_framework import serializers

from evalapp.fields import counts, declare, interval, names, number, text
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
