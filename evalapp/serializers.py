"""Output serializers every app's API shares: the INTERFACES.md `agreement` object and its parts."""

from typing import Any

from rest_framework import serializers

from evalapp.fields import counts, interval, names, number, text


class StratumAgreementSerializer(serializers.Serializer[Any]):
    n = serializers.IntegerField()
    raw_agreement = number()
    kappa = number()
    reason = text()
    too_small = serializers.BooleanField()


class BootstrapSerializer(serializers.Serializer[Any]):
    method = serializers.CharField()
    iters = serializers.IntegerField()
    seed = serializers.IntegerField()
    undefined_share = number()


class AgreementSerializer(serializers.Serializer[Any]):
    """evalstats' agreement object (Agreement.to_dict, filled by evalstats.report.agreement_report)."""

    n = serializers.IntegerField()
    labels = names()
    raw_agreement = number()
    chance_agreement = number()
    kappa = number()
    reason = text(help_text="why kappa is undefined (null when it is defined)")
    kappa_se = number()
    kappa_se0 = number()
    kappa_ci95 = interval(allow_null=True)
    bootstrap_ci95 = interval(allow_null=True)
    weights = text()
    pabak = number()
    ac1 = number()
    prevalence_index = number()
    bias_index = number()
    positive = text()
    always_correct_agreement = number()
    weighted_agreement = number()
    weighted_chance_agreement = number()
    confusion = counts(help_text='"a/b" -> count')
    per_stratum = serializers.DictField(child=StratumAgreementSerializer())
    warnings = names()
    coverage_warning = text(
        required=False,
        help_text="why kappa's intervals may cover less than 95% here (too few items, too skewed) and what to do",
    )
    bootstrap = BootstrapSerializer(required=False, help_text="how bootstrap_ci95 was drawn (absent with no items)")
    bootstrap_method = serializers.ChoiceField(
        choices=["plain", "stratified"],
        required=False,
        help_text="plain: resampled over all items (strata are descriptive); stratified: within the strata a "
        "sample was drawn by",
    )


class LeftOutSerializer(serializers.Serializer[Any]):
    """`disputed_left_out`: answers left out because their human labels disagree and nobody has settled them."""

    n = serializers.IntegerField(help_text="how many were left out")
    answers = names(help_text="which (the first 100)")
    words = serializers.CharField(help_text='e.g. "3 disputed answers left out: q12, q40, q41"')


class ComparedLeftOutSerializer(LeftOutSerializer):
    a = names(help_text="disputed in run A, among the questions both answered")
    b = names(help_text="disputed in run B, among the questions both answered")


class SampleLeftOutSerializer(LeftOutSerializer):
    blind_excluded = serializers.IntegerField(help_text="counted, not named: you label them blind")
