"""The judge beside each annotator: its kappa against one person's own labels on the sample, and that
person's kappa against the other annotators on the same items, so "as good as a person" can be read."""

from __future__ import annotations

from django.db.models import Count, F

from annotation.models import HumanLabel
from annotation.selectors.blind import OPERATOR, BlindScope
from calibration.models import Measurement, Verdict
from calibration.selectors.blind_samples import sample_is_blind
from evalstats import agreement_from_counts, bootstrap_kappa_ci

LABELS = ("correct", "incorrect")
BOOTSTRAP_ITERS = 2000


def _figures(table: list[list[int]], seed: int) -> dict:
    n = sum(map(sum, table))
    ag = agreement_from_counts(table, list(LABELS), positive="correct") if n else None
    boot = bootstrap_kappa_ci(table, iters=BOOTSTRAP_ITERS, seed=seed).as_list() if n else None
    return {"n": n, "kappa": ag.kappa if ag else None, "ci95": boot}


def per_annotator(measurement: Measurement | None, *, scope: BlindScope = OPERATOR) -> dict | None:
    """{annotator: {n, kappa_judge, kappa_judge_ci95, n_human, kappa_human, kappa_human_ci95}} over the
    measured run's items: the judge against the annotator's own current label (an invalid or error verdict
    counted as the label that disagrees), and the annotator against every other annotator's label on the
    same items (one pair per other annotator and item). None when unmeasured, or when the sample holds an
    answer the viewer labels blind (the figures would give those labels away).

    Both come from grouped counts the database makes (a 2x2 table per annotator), never from the labels
    themselves: at 10,000 items, reading 20,000 labels into Python cost most of the judge version page."""
    if measurement is None or sample_is_blind(measurement, scope):
        return None
    index = {label: i for i, label in enumerate(LABELS)}
    judge_tables: dict[str, list[list[int]]] = {}
    human_tables: dict[str, list[list[int]]] = {}
    labels = "item__answer__labels__"
    for who, label, verdict, n in (
        Verdict.objects.filter(run_id=measurement.run_id, **{f"{labels}verdict__in": LABELS})
        .values_list(f"{labels}annotator__username", f"{labels}verdict", "verdict")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        judge = verdict if verdict in LABELS else ("incorrect" if label == "correct" else "correct")
        judge_tables.setdefault(who, [[0, 0], [0, 0]])[index[label]][index[judge]] += n
    # Each pair of annotators on an item once (the first by username), counted for both of them.
    sampled = Verdict.objects.filter(run_id=measurement.run_id).values("item__answer_id")
    for who, other, label, other_label, n in (
        HumanLabel.objects.filter(
            answer_id__in=sampled,
            verdict__in=LABELS,
            answer__labels__verdict__in=LABELS,
            answer__labels__annotator__username__gt=F("annotator__username"),
        )
        .values_list("annotator__username", "answer__labels__annotator__username", "verdict", "answer__labels__verdict")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        human_tables.setdefault(who, [[0, 0], [0, 0]])[index[label]][index[other_label]] += n
        human_tables.setdefault(other, [[0, 0], [0, 0]])[index[other_label]][index[label]] += n
    seed = measurement.run.sample.seed
    out = {}
    for who in sorted(judge_tables):
        j = _figures(judge_tables[who], seed)
        h = _figures(human_tables.get(who, [[0, 0], [0, 0]]), seed)
        out[who] = {
            "n": j["n"],
            "kappa_judge": j["kappa"],
            "kappa_judge_ci95": j["ci95"],
            "n_human": h["n"],
            "kappa_human": h["kappa"],
            "kappa_human_ci95": h["ci95"],
        }
    return out
