"""The judge beside each annotator: its kappa against one person's own labels on the sample, and that
person's kappa against the other annotators on the same items, so "as good as a person" can be read."""

from __future__ import annotations

from annotation.models import HumanLabel
from annotation.selectors.blind import OPERATOR, BlindScope
from calibration.models import Measurement, Verdict
from calibration.selectors.blind_samples import sample_is_blind
from evalstats import agreement_from_counts, bootstrap_kappa_ci

LABELS = ("correct", "incorrect")
BOOTSTRAP_ITERS = 2000


def _figures(pairs: list[tuple[str, str]], seed: int) -> dict:
    index = {label: i for i, label in enumerate(LABELS)}
    table = [[0, 0], [0, 0]]
    for first, second in pairs:
        table[index[first]][index[second]] += 1
    n = len(pairs)
    ag = agreement_from_counts(table, list(LABELS), positive="correct") if n else None
    boot = bootstrap_kappa_ci(table, iters=BOOTSTRAP_ITERS, seed=seed).as_list() if n else None
    return {"n": n, "kappa": ag.kappa if ag else None, "ci95": boot}


def per_annotator(measurement: Measurement | None, *, scope: BlindScope = OPERATOR) -> dict | None:
    """{annotator: {n, kappa_judge, kappa_judge_ci95, n_human, kappa_human, kappa_human_ci95}} over the
    measured run's items: the judge against the annotator's own current label (an invalid or error verdict
    counted as the label that disagrees), and the annotator against every other annotator's label on the
    same items (one pair per other annotator and item). None when unmeasured, or when the sample holds an
    answer the viewer labels blind (the figures would give those labels away)."""
    if measurement is None or sample_is_blind(measurement, scope):
        return None
    judged = dict(Verdict.objects.filter(run_id=measurement.run_id).values_list("item__answer_id", "verdict"))
    by_answer: dict[int, dict[str, str]] = {}
    for answer_id, who, verdict in (
        HumanLabel.objects.filter(answer_id__in=list(judged), verdict__in=LABELS)
        .order_by("answer_id", "annotator__username")
        .values_list("answer_id", "annotator__username", "verdict")
    ):
        by_answer.setdefault(answer_id, {})[who] = verdict
    seed = measurement.run.sample.seed
    judge_pairs: dict[str, list[tuple[str, str]]] = {}
    human_pairs: dict[str, list[tuple[str, str]]] = {}
    for answer_id, labels in by_answer.items():
        verdict = judged[answer_id]
        for who, label in labels.items():
            judge_label = verdict if verdict in LABELS else ("incorrect" if label == "correct" else "correct")
            judge_pairs.setdefault(who, []).append((label, judge_label))
            human_pairs.setdefault(who, []).extend((label, other) for o, other in labels.items() if o != who)
    out = {}
    for who in sorted(judge_pairs):
        j, h = _figures(judge_pairs[who], seed), _figures(human_pairs[who], seed)
        out[who] = {
            "n": j["n"],
            "kappa_judge": j["kappa"],
            "kappa_judge_ci95": j["ci95"],
            "n_human": h["n"],
            "kappa_human": h["kappa"],
            "kappa_human_ci95": h["ci95"],
        }
    return out
