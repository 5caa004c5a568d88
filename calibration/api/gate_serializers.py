"""Output serializers of a judge version's gate: overall and per-stratum agreement, the baseline it is
held to, per-criterion gates, biases (length, self-preference, per annotator), the models it served,
and its self-consistency over repeats."""

from rest_framework import serializers

from evalapp.fields import counts, interval, names, number, text


class GateStratumSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    raw_agreement = number()
    kappa = number()
    too_small = serializers.BooleanField()
    reason = serializers.CharField(required=False, help_text="when kappa is undefined")


class SampleWeightingSerializer(serializers.Serializer):
    """How the calibration sample stands to the strata budget, and the estimate weighted back to it."""

    follows_budget = serializers.BooleanField(help_text="every stratum drew exactly its budget share")
    budget_counts = counts(help_text="stratum -> the budget's own largest-remainder share of the sample")
    drawn = counts(help_text="stratum -> answers drawn")
    raised = names(help_text="strata a floor of one answer raised above their share")
    short = names(help_text="strata with fewer labelled answers than their share")
    weights = serializers.DictField(
        child=serializers.FloatField(), help_text="stratum -> per-answer weight back to the budget"
    )
    raw_agreement_weighted = number()
    kappa_weighted = number(help_text="conservative kappa of the budget-weighted table")
    kappa_weighted_ci95 = interval(allow_null=True, help_text="stratified bootstrap with the budget's shares")
    words = text(help_text="the sentence said when the sample does not follow the budget; null when it does")


class GateBaselineSerializer(serializers.Serializer):
    value = serializers.CharField(help_text="the humans' most common value")
    raw_agreement = number()
    weighted_agreement = number()
    kappa = number()


class GateCriterionStratumSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    raw_agreement = number()
    kappa = number()
    reason = serializers.CharField(allow_null=True, help_text="why kappa is undefined; null when defined")
    too_small = serializers.BooleanField()


class GateCriterionSerializer(serializers.Serializer):
    """One criterion the version scores: the judge's values against the final human values."""

    n = serializers.IntegerField()
    kappa = number(help_text="weighted (quadratic) on an ordinal criterion; invalid values count as disagreements")
    weights = serializers.CharField(allow_null=True, help_text="quadratic or none; null when unmeasured")
    alpha = number(help_text="Krippendorff's alpha, ordinal or nominal")
    kappa_ci95 = interval(allow_null=True, help_text="stratified bootstrap")
    raw_agreement = number()
    baseline = GateBaselineSerializer(allow_null=True, help_text="always answering the humans' most common value")
    confusion = counts(help_text='"human/judge" -> count, the judge\'s invalid values in their own column')
    per_stratum = serializers.DictField(child=GateCriterionStratumSerializer())
    invalid = serializers.IntegerField(allow_null=True, help_text="judge values outside the criterion's")
    threshold = serializers.FloatField(allow_null=True, help_text="null: reported, not gated")
    status = serializers.ChoiceField(
        choices=["pass", "fail", "ungated", "unmeasured", "stale"],
        help_text="stale: values of it under the sample were written or settled after the measurement",
    )
    reasons = names()
    stale_items = serializers.IntegerField(
        allow_null=True, help_text="sample answers with a value of it written or settled since; null while blind"
    )


class LengthBiasSerializer(serializers.Serializer):
    """Does the judge pass long correct answers more often than short ones?"""

    statistic = number(
        help_text="judge pass rate among human-correct answers, longest quarter minus shortest, in points"
    )
    ci95 = interval(allow_null=True, help_text="percentile bootstrap over items, seeded by the sample's seed")
    warning = text(help_text="said when the interval excludes 0 and the gap is at least the warning setting")
    method = serializers.CharField()
    n = serializers.IntegerField(help_text="human-correct answers measured")
    n_short = serializers.IntegerField()
    n_long = serializers.IntegerField()
    reason = text(help_text="why the statistic is null")


class ServedPairSerializer(serializers.Serializer):
    served_model = serializers.CharField(help_text="the chat completion's `model`")
    system_fingerprint = serializers.CharField(allow_blank=True, help_text="blank when the server gave none")


class ServedCountSerializer(ServedPairSerializer):
    n = serializers.IntegerField(help_text="verdicts of the measured run it served")


class ServedLatestSerializer(ServedPairSerializer):
    kind = serializers.ChoiceField(choices=["calibration", "grading"], help_text="which kind of run reported it")
    run = serializers.IntegerField(help_text="the calibration or grading run")


class ServedModelSerializer(serializers.Serializer):
    """Which model the judge's server said it ran, when measured and since."""

    calibrated = ServedCountSerializer(many=True, help_text="reported by the measured run's verdicts, oldest first")
    latest = ServedLatestSerializer(allow_null=True, help_text="the newest reported by a later run; null if none")
    changed = serializers.BooleanField(help_text="the newest differs from every calibrated one: the gate is stale")
    reason = text(help_text="the sentence naming both models when changed")
    warning = text(help_text="said when the measured run itself was served by more than one model")


class AnnotatorCalibrationSerializer(serializers.Serializer):
    n = serializers.IntegerField(help_text="sample items this annotator labelled")
    kappa_judge = number(help_text="the judge against this annotator's own labels")
    kappa_judge_ci95 = interval(allow_null=True)
    n_human = serializers.IntegerField(help_text="label pairs with the other annotators on the same items")
    kappa_human = number(help_text="this annotator against the other annotators")
    kappa_human_ci95 = interval(allow_null=True)


class FamilyBiasSerializer(serializers.Serializer):
    family = serializers.CharField(help_text="the judge's model family")
    same_family_n = serializers.IntegerField(help_text="human-incorrect answers written by the judge's family")
    other_n = serializers.IntegerField()
    lenience_same = serializers.FloatField(help_text="share of them the judge passed")
    lenience_other = serializers.FloatField()
    diff_points = serializers.FloatField(help_text="lenience_same - lenience_other, in points")
    ci95 = interval(help_text="Newcombe's interval of the difference, in points")
    warning = serializers.BooleanField(help_text="more lenient on its own family, interval excluding 0")


class SelfConsistencySerializer(serializers.Serializer):
    """The judge against itself over a calibration run's repeats (calibrate --repeats R)."""

    repeats = serializers.IntegerField(help_text="how many times each item was judged")
    n = serializers.IntegerField(help_text="items judged that many times")
    flip_rate = number(help_text="share of items whose repeated verdicts are not all equal")
    flip_rate_ci95 = interval(allow_null=True, help_text="bootstrap over items, seeded by the sample's seed")
    kappa_self = number(help_text="Fleiss' kappa of the repeats with each other")
    kappa_self_ci95 = interval(allow_null=True, help_text="bootstrap over items")
    kappa_human = number(help_text="the judge's kappa against the humans it is compared with (the conservative)")
    warning = serializers.BooleanField(
        help_text="kappa_self below kappa_human: less consistent with itself than with people"
    )
    words = serializers.CharField(allow_blank=True, help_text="the sentence of the warning; blank without one")


class GateSerializer(serializers.Serializer):
    """The INTERFACES.md gate object. For a viewer labelling answers of the measured sample blind, the
    figures are null (empty maps), `blind` is true and `blind_reason` says why."""

    judge_version = serializers.IntegerField()
    config_hash = serializers.CharField()
    judge = serializers.CharField()
    version = serializers.IntegerField()
    threshold = serializers.FloatField()
    policy = serializers.CharField()
    min_n = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["pass", "fail", "unmeasured", "stale"])
    n = serializers.IntegerField()
    raw_agreement = number()
    kappa = number(help_text="invalid judge outputs counted as a third label (kappa_invalid_as_label)")
    kappa_ci95 = interval(allow_null=True)
    bootstrap_ci95 = interval(allow_null=True, required=False, help_text="once measured")
    kappa_conservative = number(
        help_text="each invalid judge output counted as the label that disagrees with the human: the gate decides on it"
    )
    kappa_invalid_as_label = number(help_text="the same as kappa")
    kappa_conservative_ci95 = interval(allow_null=True, help_text="closed-form, clipped to [-1, 1]")
    bootstrap_ci95_conservative = interval(
        allow_null=True, required=False, help_text="the lower_bound policy reads this one"
    )
    decided_on = serializers.CharField(required=False, help_text='"kappa_conservative", once measured')
    bootstrap_method = serializers.ChoiceField(
        choices=["stratified"],
        required=False,
        help_text="once measured: the bootstrap intervals resample within the strata the sample was drawn by",
    )
    coverage_warning = text(
        help_text="why the intervals may cover less than 95% here (too few items, too skewed) and what to do"
    )
    sample_weighting = SampleWeightingSerializer(
        allow_null=True, help_text="null when unmeasured, for a sample drawn without stored shares, or when blind"
    )
    length_bias = LengthBiasSerializer(allow_null=True, help_text="null when unmeasured or blind")
    self_consistency = SelfConsistencySerializer(
        allow_null=True, help_text="null when unmeasured, when the run judged each item once, or when blind"
    )
    per_annotator = serializers.DictField(
        child=AnnotatorCalibrationSerializer(),
        allow_null=True,
        required=False,
        help_text="one version's gate: annotator -> the judge beside them; null when unmeasured or blind",
    )
    family_bias = FamilyBiasSerializer(
        allow_null=True,
        required=False,
        help_text="one version's gate: lenience on the judge's own model family; null when unknown or blind",
    )
    served_model = ServedModelSerializer(allow_null=True, help_text="null when unmeasured")
    chance_agreement = number()
    always_correct_agreement = number()
    per_stratum = serializers.DictField(child=GateStratumSerializer())
    confusion = counts(help_text='"human/judge" -> count')
    criteria = serializers.DictField(
        child=GateCriterionSerializer(),
        help_text="criterion -> its figures and status; {} when the version scores none. The status passes "
        "only when every criterion with a threshold passes",
    )
    dataset_hash = text()
    measured_at = text()
    invalid = serializers.IntegerField(help_text="invalid (unparseable) judge outputs in the measurement")
    excluded = serializers.IntegerField(required=False, help_text="once measured")
    stale_items = serializers.IntegerField(required=False, help_text="once measured")
    run = serializers.IntegerField(allow_null=True, help_text="the calibration run measured (or running)")
    reasons = names()
    warnings = names(required=False, help_text="once measured")
    reason = serializers.CharField(required=False, help_text="when unmeasured, or kappa is undefined")
    blind = serializers.BooleanField()
    blind_reason = serializers.CharField(required=False)
