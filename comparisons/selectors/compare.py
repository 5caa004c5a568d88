"""`compare_runs`: B against A on the questions both answered and both scored, with the paired and the
naive interval, per-stratum gaps, the verdict against the run-to-run band, stale gold and dataset-hash
warnings; `regression_detail` for one question."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from annotation.models import DatasetVersion, Run
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.corpus import chunk_with_neighbours
from annotation.selectors.datasets import version_record, version_stratum_qids
from annotation.selectors.disputes import left_out
from calibration.selectors.grades import (
    RunGrades,
    answer_grade,
    answer_values,
    run_grades,
)
from comparisons.selectors.criteria import criteria_comparison
from comparisons.selectors.crossed import attribution
from comparisons.selectors.runs import (
    PINNED,
    _run_by_id,
    repeat_runs,
    run_summary,
    stale_gold_report,
)
from evalapp.db import side_by_side
from evalapp.errors import Problem, ServiceError
from evalapp.validation import iters_problem, raise_problems, seed_problem
from evalstats.band import difference_verdict, run_band
from evalstats.paired import n_for_gap, paired_counts


def run_band_for(runs: Sequence[Run], known: dict[str, RunGrades] | None = None) -> dict | None:
    """The run-to-run band (evalstats.band.run_band) of repeat runs, in points; None under 2.
    `known` holds grades already computed (run_id -> RunGrades) so they are not read twice."""
    if len(runs) < 2:
        return None
    scored = []
    for r in runs:
        score = ((known or {}).get(r.run_id) or run_grades(r)).score()
        if score is not None:
            scored.append((r.run_id, 100 * score))
    if len(scored) < 2:
        return None
    band = run_band([s for _, s in scored])
    return {
        "runs": [rid for rid, _ in scored],
        "n_runs": band.n_runs,
        "mean_points": band.mean,
        "sd_points": band.sd,
        "lo_points": band.lo,
        "hi_points": band.hi,
        "width_points": band.width,
    }


def _verdict(
    diff_points: float,
    ci95: tuple[float, float],
    band: dict | None,
    resolvable: float,
    discordant_rate: float,
    detectable: float | None = None,
) -> dict:
    if band is not None:
        v = difference_verdict(diff_points, ci95, band["width_points"])
        out = {"status": v.status, "words": v.words, "clears_interval": v.clears_interval, "clears_band": v.clears_band}
    else:
        lo, hi = ci95
        clears = lo > 0 or hi < 0
        ci = f"[{lo:.1f}, {hi:.1f}]"
        if clears:
            status = "band unmeasured"
            words = (
                f"{diff_points:+.1f} points: its 95% interval {ci} excludes zero, but no run-to-run band "
                f"is measured (import two or more repeat runs of an unchanged system), so rerun noise "
                f"is not ruled out."
            )
        else:
            status = "the set is too small to resolve it"
            if discordant_rate > 0:
                resolves = (
                    f"this set resolves gaps of {resolvable:.1f} points, a real gap that size being found "
                    f"about half the time; one of {detectable:.1f} points is found with 80% power"
                )
            else:
                resolves = (
                    "no question is answered differently, so the discordance the resolvable gap rests on is unmeasured"
                )
            words = (
                f"{diff_points:+.1f} points: the set is too small to resolve it; its 95% interval {ci} "
                f"includes zero ({resolves})."
            )
        out = {"status": status, "words": words, "clears_interval": clears, "clears_band": None}
    gap = abs(diff_points)
    out["n_needed_for_this_gap"] = (
        n_for_gap(gap, discordant_rate=discordant_rate) if gap > 0 and discordant_rate > 0 else None
    )
    return out


def _paired_outcomes(ga: RunGrades, gb: RunGrades) -> dict[str, frozenset[str]]:
    """The questions both runs scored, split by outcome: `paired` (all of them), `both_right`,
    `b_only` (only B right) and `a_only` (only A right: the regressions)."""
    return {
        "paired": ga.scored & gb.scored,
        "both_right": ga.right & gb.right,
        "b_only": gb.right & ga.wrong,
        "a_only": ga.right & gb.wrong,
    }


def _paired_stats(outcomes: dict[str, set[str]], *, iters: int, seed: int):
    both, b_only = len(outcomes["both_right"]), len(outcomes["b_only"])
    return paired_counts(
        n=len(outcomes["paired"]),
        a_right=both + len(outcomes["a_only"]),
        b_right=both + b_only,
        b_only=b_only,
        regressions=outcomes["a_only"],
        iters=iters,
        seed=seed,
    )


def _stratum_sets(
    version: DatasetVersion | None,
    fallback: DatasetVersion | None,
    qids: frozenset[str],
    known: dict[str, list[str]] | None = None,
) -> dict[str, frozenset[str]]:
    """stratum -> those of `qids` in it, by `version`, then by `fallback` for qids `version` lacks;
    the rest under "(unknown)". Sorted by stratum name. `known`: `version`'s version_stratum_qids, read
    already."""
    out: dict[str, frozenset[str]] = {}
    left = qids
    for v in (version, fallback):
        if v is None or not left:
            continue
        by_stratum = known if known is not None and v is version else version_stratum_qids(v)
        for name, members in by_stratum.items():
            found = left.intersection(members)
            if found:
                out[name] = out[name] | found if name in out else found
        left = left.difference(*out.values()) if sum(map(len, out.values())) < len(qids) else frozenset()
    if left:
        out["(unknown)"] = left
    return dict(sorted(out.items()))


def compare_runs(
    *,
    run_a: str,
    run_b: str,
    iters: int = 10_000,
    seed: int = 0,
    check_stale: bool = True,
    band_runs: Sequence[str] | None = None,
    grades: tuple[RunGrades, RunGrades] | None = None,
    strata: bool = True,
    scope: BlindScope = OPERATOR,
) -> dict:
    """B against A on the questions both answered and both scored: the INTERFACES.md `compare` object
    (n, a_score, b_score, diff_points, ci95, naive_ci95, se_points, b_only, a_only, regressions,
    resolvable_gap_points) extended with the pairing, warnings, stale gold, per-stratum gaps, the
    run-to-run band and the verdict. Unknown run: ServiceError (exit 2, HTTP 404). A run in the viewer's
    blind `scope` (as A, B or a band run): PermissionDenied (HTTP 403); repeats found for the band skip them."""
    raise_problems("bad comparison options", iters_problem(iters), seed_problem(seed))
    a, b = _run_by_id(run_a, scope), _run_by_id(run_b, scope)
    if a.pk == b.pk:
        raise ServiceError(f"run {run_a!r} compared with itself", [Problem("A and B must be two runs", field="b")])
    band_objs = [_run_by_id(r, scope) for r in band_runs] if band_runs else None
    # Stale gold first: a score on labels whose passage left the corpus is reported as such.
    stale_reports = []
    if check_stale:
        for v in {a.dataset_version_id: a.dataset_version, b.dataset_version_id: b.dataset_version}.values():
            report = stale_gold_report(v)
            if report is not None:
                stale_reports.append(report)
    strata_version = b.dataset_version or a.dataset_version
    # Both runs' grades and the strata of B's version are independent reads over a million rows each.
    reads: list[Callable[[], object]] = [] if grades is not None else [partial(run_grades, a), partial(run_grades, b)]
    if strata and strata_version is not None:
        reads.append(partial(version_stratum_qids, strata_version))
    found = side_by_side(*reads)
    ga, gb = grades if grades is not None else (found[0], found[1])
    known_strata = found[-1] if strata and strata_version is not None else None
    # The pairing is set algebra over qids (in C, a million in well under a second), and the
    # statistics need only its counts: see evalstats.paired.paired_counts.
    outcomes = _paired_outcomes(ga, gb)
    n_both_answered = len(outcomes["paired"]) if not (ga.unscored or gb.unscored) else len(ga.answered & gb.answered)
    if not n_both_answered:
        raise ServiceError(
            f"runs {a.run_id!r} and {b.run_id!r} answered no question in common", [Problem("no shared qid", field="b")]
        )
    if not outcomes["paired"]:
        raise ServiceError(
            f"runs {a.run_id!r} and {b.run_id!r} share {n_both_answered} questions but none "
            f"is scored in both yet (awaiting grades)",
            code=3,
            status=409,
        )
    cmp = _paired_stats(outcomes, iters=iters, seed=seed)
    out = cmp.to_dict()
    n = cmp.n
    discordant_rate = (cmp.b_only + cmp.a_only) / n

    warnings = []
    hash_match = a.dataset_hash == b.dataset_hash
    if not hash_match:
        warnings.append(
            f"DATASET HASH MISMATCH: {a.run_id} was scored on {a.dataset_hash or 'an unrecorded dataset'} and "
            f"{b.run_id} on {b.dataset_hash or 'an unrecorded dataset'}; a score computed on a different set of "
            f"labels is a different number. Compared only on the {n} questions both answered and both scored."
        )
    if a.dataset_id != b.dataset_id:
        warnings.append(
            f"the runs are on different datasets ({run_summary(a)['dataset']} vs {run_summary(b)['dataset']})"
        )
    dropped = {
        "answered_only_a": len(ga.answered) - n_both_answered,
        "answered_only_b": len(gb.answered) - n_both_answered,
        "unscored": n_both_answered - n,
    }
    if dropped["unscored"] or dropped["answered_only_a"] or dropped["answered_only_b"]:
        warnings.append(
            f"{n} questions paired; {sum(dropped.values())} dropped "
            f"({dropped['answered_only_a']} answered only by A, {dropped['answered_only_b']} only by B, "
            f"{dropped['unscored']} not scored in both)"
        )
    # Questions both answered that one side could not score because its labels disagree.
    shared = ga.answered & gb.answered
    disputed_a, disputed_b = sorted(ga.disputed & shared), sorted(gb.disputed & shared)
    disputed = {**left_out(set(disputed_a) | set(disputed_b)), "a": disputed_a, "b": disputed_b}
    if disputed["n"]:
        warnings.append(disputed["words"] + " (settle them on the adjudication list)")
    stale = {}
    for report in stale_reports:
        stale_all = report.pop("_stale_all")
        report["stale_in_paired"] = len(outcomes["paired"].intersection(stale_all))
        # Only a question the two runs answer differently can move the paired difference when its gold changes.
        report["stale_in_discordant"] = len((outcomes["a_only"] | outcomes["b_only"]).intersection(stale_all))
        stale[report["dataset_hash"]] = report
        if report["stale"]:
            warnings.append(
                f"{report['stale']} gold label(s) of {report['dataset_hash'][:19]}… are stale "
                f"({report['stale_in_paired']} among the paired questions, {report['stale_in_discordant']} on "
                f"discordant ones, where a stale label can move the difference): their gold_text "
                f"is no longer in the live corpus"
            )

    # Strata from B's version (A's for questions B's version lacks): the population the newer number
    # claims to measure.
    per_stratum = {}
    if strata:
        for name, members in _stratum_sets(
            strata_version,
            a.dataset_version if a.dataset_version_id != b.dataset_version_id else None,
            outcomes["paired"],
            known_strata,
        ).items():
            s = _paired_stats(
                {k: members.intersection(v) if k != "paired" else members for k, v in outcomes.items()},
                iters=iters,
                seed=seed,
            )
            per_stratum[name] = {
                "n": s.n,
                "a_score": s.a_score,
                "b_score": s.b_score,
                "diff_points": s.diff_points,
                "ci95": list(s.ci95),
                "b_only": s.b_only,
                "a_only": s.a_only,
                "resolvable_gap_points": s.resolvable_gap_points,
                "regressions": len(s.regressions),
                "ci95_method": s.ci95_method,
                "mcnemar_p": s.mcnemar_p,
                "detectable_gap_80": s.detectable_gap_80,
            }
    stratum_regressions = [name for name, st in per_stratum.items() if st["ci95"][1] < 0]
    if stratum_regressions:
        named = "; ".join(
            f"{name} {per_stratum[name]['diff_points']:+.1f} points "
            f"[{per_stratum[name]['ci95'][0]:.1f}, {per_stratum[name]['ci95'][1]:.1f}]"
            for name in stratum_regressions
        )
        warnings.insert(
            0,
            f"REGRESSION IN {'A STRATUM' if len(stratum_regressions) == 1 else 'STRATA'}: {named}: "
            f"B is worse than A there (the 95% interval lies wholly below zero), whatever the total "
            f"({cmp.diff_points:+.1f} points) says.",
        )

    if band_objs is not None:
        band = run_band_for(band_objs, known={a.run_id: ga, b.run_id: gb})
        if band is not None:
            band["from"] = "given"
    else:
        band = None
        for base, label in ((a, "a"), (b, "b")):
            band = run_band_for(repeat_runs(base, scope=scope), known={a.run_id: ga, b.run_id: gb})
            if band is not None:
                band["from"] = f"repeats of run {label}"
                break
    out.update(
        {
            "run_a": run_summary(a),
            "run_b": run_summary(b),
            "dataset_hash_match": hash_match,
            "pairing": {"paired": n, "dropped": sum(dropped.values()), **dropped},
            "grading": {"a": ga.summary(), "b": gb.summary()},
            "disputed_left_out": disputed,
            "differs": {k: [getattr(a, k), getattr(b, k)] for k in PINNED if getattr(a, k) != getattr(b, k)},
            "attribution": attribution(
                a, b, n=n, dropped=sum(dropped.values()), diff_points=cmp.diff_points, ci95=cmp.ci95
            ),
            "discordant_rate": discordant_rate,
            "per_stratum": per_stratum if strata else None,
            "stratum_regressions": stratum_regressions,
            "stale_gold": stale,
            "band": band,
            "verdict": _verdict(
                cmp.diff_points, cmp.ci95, band, cmp.resolvable_gap_points, discordant_rate, cmp.detectable_gap_80
            ),
            "iters": iters,
            "seed": seed,
            "warnings": warnings,
        }
    )
    # Only where the datasets define criteria: a dataset without them compares exactly as before.
    criteria = criteria_comparison(a, b, iters=iters, seed=seed)
    if criteria:
        out["criteria"] = criteria
    return out


def regression_detail(*, run_a: str, run_b: str, qid: str, scope: BlindScope = OPERATOR) -> dict:
    """One question of a comparison opened: the question, its gold passage, and both answers (refused
    when either run is in the viewer's blind `scope`)."""
    a, b = _run_by_id(run_a, scope), _run_by_id(run_b, scope)
    version = b.dataset_version or a.dataset_version
    record = version_record(version, qid) or version_record(a.dataset_version, qid)
    answers = {}
    for key, run in (("a", a), ("b", b)):
        row = next(answer_values(run, {qid}, "answer", "correct", "final_verdict", "retrieved", "prompt_chunks"), None)
        if row is None:
            raise ServiceError(
                f"run {run.run_id!r} has no answer to {qid!r}", [Problem("unknown qid", field="qid")], status=404
            )
        answers[key] = {
            "run_id": run.run_id,
            "answer": row[1],
            "correct": row[2],
            "final_verdict": row[3],
            "retrieved": row[4],
            "prompt_chunks": row[5],
        }
    for key, run in (("a", a), ("b", b)):
        answers[key]["graded"], answers[key]["graded_by"] = answer_grade(run, qid)
    passage = (record or {}).get("gold_text")
    passage_from = "gold_text" if passage else None
    if not passage and (record or {}).get("gold_chunk_id"):
        found = chunk_with_neighbours(record["gold_chunk_id"], around=0)
        if found is not None:
            passage, passage_from = found[0].text, ("retired chunk" if found[0].retired else "live chunk")
    return {
        "qid": qid,
        "question": (record or {}).get("question"),
        "stratum": (record or {}).get("stratum"),
        "gold_passage": passage,
        "gold_passage_from": passage_from,
        "gold_chunk_id": (record or {}).get("gold_chunk_id"),
        "gold_text": (record or {}).get("gold_text"),
        "expected": (record or {}).get("expected"),
        "grading": (record or {}).get("grading"),
        "a": answers["a"],
        "b": answers["b"],
    }
