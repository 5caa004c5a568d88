"""One judge version against another: their latest measured calibration runs on a sample they share,
paired item by item against the final human verdicts."""

from __future__ import annotations

from annotation.selectors.blind import OPERATOR, BlindScope
from calibration.models import JudgeVersion, Measurement, Verdict
from calibration.selectors.blind_samples import sample_is_blind
from evalapp.errors import Problem, ServiceError
from evalstats import paired_counts
from evalstats.judge_pair import paired_kappa

HUMAN_LABELS = ("correct", "incorrect")
# As many draws as the gate's bootstraps, seeded by the sample's own seed: the figures are reproducible.
BOOTSTRAP_ITERS = 2000


def shared_measurements(a: JudgeVersion, b: JudgeVersion) -> tuple[Measurement, Measurement]:
    """The latest measurement of each version on the same stored sample: of the samples both were measured
    on, the one whose newer measurement is the most recent. ServiceError naming the versions when none."""
    newest: dict[int, dict[int, Measurement]] = {a.pk: {}, b.pk: {}}
    for m in (
        Measurement.objects.filter(judge_version_id__in=(a.pk, b.pk))
        .select_related("run__sample")
        .order_by("-measured_at", "-id")
    ):
        newest[m.judge_version_id].setdefault(m.run.sample_id, m)
    shared = set(newest[a.pk]) & set(newest[b.pk])
    if not shared:
        raise ServiceError(
            f"judge versions {a.pk} and {b.pk} share no measured calibration sample; calibrate both on the "
            "same sample (a judge's versions reuse its stored sample)",
            [Problem("no calibration sample measured for both versions", field="b")],
        )

    def recency(sample_id: int) -> tuple:
        ma, mb = newest[a.pk][sample_id], newest[b.pk][sample_id]
        return max((ma.measured_at, ma.pk), (mb.measured_at, mb.pk))

    sample_id = max(shared, key=recency)
    return newest[a.pk][sample_id], newest[b.pk][sample_id]


def _as_label(verdict: str, human: str) -> str:
    """A judge's verdict as a human label: invalid or error count as the label that disagrees (as the gate's
    conservative kappa counts them)."""
    if verdict in HUMAN_LABELS:
        return verdict
    return "incorrect" if human == "correct" else "correct"


def judges_compare(a: JudgeVersion, b: JudgeVersion, *, scope: BlindScope = OPERATOR) -> dict:
    """Version B against version A on their shared calibration sample: over the items both runs judged
    whose answer has a final human verdict now, each one's agreement with the humans, the paired difference
    B - A in points with its interval (evalstats.paired), the discordant counts and McNemar's p, and both
    kappas with bootstrap intervals and the paired interval of kappa_b - kappa_a (evalstats.judge_pair).

    Refused (ServiceError) when the versions share no measured sample, no item is paired, or the sample holds
    answers the viewer labels blind (the pairing would give their verdicts away)."""
    if a.pk == b.pk:
        raise ServiceError("compare two different judge versions", [Problem("is the same version as a", field="b")])
    ma, mb = shared_measurements(a, b)
    if sample_is_blind(ma, scope):
        raise ServiceError(
            "the shared calibration sample holds answers you are labelling blind; the comparison is hidden "
            "from you until those items are complete",
            code=1,
            status=403,
        )
    rows: dict[int, dict] = {}
    for run_id, item_id, verdict, final in Verdict.objects.filter(run_id__in=(ma.run_id, mb.run_id)).values_list(
        "run_id", "item_id", "verdict", "item__answer__final_verdict"
    ):
        rows.setdefault(item_id, {"human": final})["a" if run_id == ma.run_id else "b"] = verdict
    paired = [r for _item, r in sorted(rows.items()) if r["human"] in HUMAN_LABELS and "a" in r and "b" in r]
    if not paired:
        raise ServiceError(
            f"no item of sample {ma.run.sample_id} has both versions' verdicts and a final human verdict",
            [Problem("nothing to pair", field="b")],
        )
    n = len(paired)
    a_ok = [r["a"] == r["human"] for r in paired]
    b_ok = [r["b"] == r["human"] for r in paired]
    seed = ma.run.sample.seed
    a_only = [str(i) for i, (x, y) in enumerate(zip(a_ok, b_ok, strict=True)) if x and not y]
    b_only = sum(1 for x, y in zip(a_ok, b_ok, strict=True) if y and not x)
    comparison = paired_counts(
        n=n, a_right=sum(a_ok), b_right=sum(b_ok), b_only=b_only, regressions=a_only, iters=BOOTSTRAP_ITERS, seed=seed
    )
    humans = [r["human"] for r in paired]
    kappas = paired_kappa(
        humans,
        [_as_label(r["a"], r["human"]) for r in paired],
        [_as_label(r["b"], r["human"]) for r in paired],
        labels=HUMAN_LABELS,
        iters=BOOTSTRAP_ITERS,
        seed=seed,
    )

    def pair(ci):
        return list(ci) if ci is not None else None

    return {
        "judge_version_a": a.pk,
        "judge_version_b": b.pk,
        "sample": ma.run.sample_id,
        "run_a": ma.run_id,
        "run_b": mb.run_id,
        "n": n,
        "agreement_a": comparison.a_score,
        "agreement_b": comparison.b_score,
        "diff_points": comparison.diff_points,
        "ci95": pair(comparison.ci95),
        "ci95_method": comparison.ci95_method,
        "a_only": comparison.a_only,
        "b_only": comparison.b_only,
        "mcnemar_p": comparison.mcnemar_p,
        "kappa_a": kappas.kappa_a,
        "kappa_b": kappas.kappa_b,
        "kappa_a_ci95": pair(kappas.ci95_a),
        "kappa_b_ci95": pair(kappas.ci95_b),
        "kappa_diff": kappas.diff,
        "kappa_diff_ci95": pair(kappas.diff_ci95),
        "iters": BOOTSTRAP_ITERS,
        "seed": seed,
    }
