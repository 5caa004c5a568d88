"""A calibration run's criteria measured: for each criterion its version scores, the judge's values against
the final human values (annotation.selectors.criterion_finals) over the sample, as the figures stored on
the measurement (`Measurement.criteria`) and read by the gate. Every figure comes from evalstats."""

from __future__ import annotations

from collections import Counter
from typing import Any

from annotation.models import Dataset
from annotation.selectors.criterion_finals import criterion_finals
from calibration.models import JudgeVersion, Verdict
from calibration.services.judge_criteria import dataset_definitions
from evalstats import agreement, confusion_matrix, multi_rater_agreement, strata_tables
from evalstats.criteria import Definition
from evalstats.invalid import INVALID, invalid_as_disagreement
from evalstats.report import report_from_tables


def version_criteria_definitions(version: JudgeVersion, dataset: Dataset) -> list[dict[str, Any]]:
    """[{"name", "kind", "values"}] of the criteria the version scores, as the dataset defines them now,
    in name order: what a backend is told it may answer."""
    defs = dataset_definitions(dataset)
    return [
        {"name": c["name"], "kind": defs[c["name"]][1].kind, "values": list(defs[c["name"]][1].values)}
        for c in version.criteria or []
        if c["name"] in defs
    ]


def criteria_measure(
    *, version: JudgeVersion, dataset: Dataset, verdicts: list[Verdict], seed: int, iters: int
) -> dict[str, dict[str, Any]]:
    """{criterion: its figures} for the version's criteria over the run's verdicts (criterion_figures)."""
    defs = dataset_definitions(dataset)
    answer_ids = [v.item.answer_id for v in verdicts]
    out = {}
    for entry in version.criteria or []:
        name = entry["name"]
        if name not in defs:
            continue  # refused when the run started; a definition is never deleted
        row, rule = defs[name]
        finals = criterion_finals(name=name, answer_ids=answer_ids)
        pairs = [
            (finals.get(v.item.answer_id), (v.values or {}).get(name, INVALID), v.item.stratum, v.item.answer_id)
            for v in verdicts
        ]
        out[name] = {
            "criterion": name,
            "version": row.number,
            **criterion_figures(rule, pairs, seed=seed, iters=iters, min_n=version.judge.min_n),
        }
    return out


def criterion_figures(
    rule: Definition, pairs: list[tuple[str | None, Any, str, int]], *, seed: int, iters: int, min_n: int
) -> dict[str, Any]:
    """The judge against the humans on one criterion, from (final human value or None, judge value,
    stratum, item id) per verdict.

    Items with no final human value (none given, annotators differ, or a value the latest definition
    lacks) are `excluded`. A judge value outside the definition is `invalid` and counts, as an invalid
    verdict does in the gate, as the value that disagrees most with the human (evalstats.invalid), so it
    never makes kappa kinder. Kappa is weighted (quadratic) on an ordinal criterion in the definition's
    order, unweighted otherwise; its interval is the stratified bootstrap (the sample is drawn by strata).
    Alpha (ordinal or nominal) reads the valid judge values only. The baseline is always answering the
    humans' most common value (the first in the definition's order on a tie). `counts` is the folded
    table the gate decides on; `confusion` the table as judged, invalid column included.
    """
    values = list(rule.values)
    weights = "quadratic" if rule.kind == "ordinal" else None
    kept = [(h, j if j in values else INVALID, s, i) for h, j, s, i in pairs if h in values]
    human = [h for h, _j, _s, _i in kept]
    judge = [j for _h, j, _s, _i in kept]
    strata = [s for _h, _j, s, _i in kept]
    invalid = sum(1 for j in judge if j == INVALID)
    labels = values + ([INVALID] if invalid else [])
    _, counts = confusion_matrix(human, judge, labels)
    _, folded = invalid_as_disagreement(counts, labels)
    tables = strata_tables(human, judge, strata, labels=labels)[1] if kept else None
    folded_tables = {s: invalid_as_disagreement(t, labels)[1] for s, t in tables.items()} if tables else None
    report = report_from_tables(
        values,
        folded,
        folded_tables,
        weights=weights,
        iters=iters,
        seed=seed,
        positive=None,
        min_n=min_n,
        stratified=folded_tables is not None,
    )
    valid = [(h, j, i) for h, j, _s, i in kept if j != INVALID]
    multi = multi_rater_agreement(
        [i for _h, _j, i in valid] * 2,
        ["humans"] * len(valid) + ["judge"] * len(valid),
        [h for h, _j, _i in valid] + [j for _h, j, _i in valid],
        labels=values,
        metric="ordinal" if rule.kind == "ordinal" else "nominal",
        iters=iters,
        seed=seed,
    )
    baseline = None
    if human:
        tally = Counter(human)
        common = max(values, key=lambda v: (tally[v], -values.index(v)))
        always = agreement(human, [common] * len(human), labels=values, weights=weights, positive=None)
        baseline = {
            "value": common,
            "raw_agreement": always.raw_agreement,
            "weighted_agreement": always.weighted_agreement,
            "kappa": always.kappa,
        }
    return {
        "kind": rule.kind,
        "values": values,
        "weights": weights or "none",
        "n": report["n"],
        "excluded": len(pairs) - len(kept),
        "invalid": invalid,
        "raw_agreement": report["raw_agreement"],
        "weighted_agreement": report["weighted_agreement"],
        "kappa": report["kappa"],
        "reason": report["reason"],
        "kappa_ci95": report["bootstrap_ci95"],
        "alpha": multi.krippendorff_alpha,
        "alpha_ci95": list(multi.alpha_ci95) if multi.alpha_ci95 is not None else None,
        "alpha_metric": multi.metric,
        "baseline": baseline,
        "counts": folded.tolist(),
        "confusion": {f"{h}/{j}": int(counts[a][b]) for a, h in enumerate(values) for b, j in enumerate(labels)},
        "per_stratum": report["per_stratum"],
        "warnings": list(report["warnings"]) + list(multi.warnings),
    }
