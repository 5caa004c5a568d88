"""Reads that compare systems honestly, computed on the fly from runs (they are cheap).

- `compare_runs`: B against A on the questions both answered and both scored, with the paired and the
  naive interval, per-stratum gaps, the verdict against the run-to-run band, stale gold and
  dataset-hash warnings.
- `failure_attribution`: why each failing answer failed (retrieval, prompt assembly, generation).
- `series`: a metric over time keyed by (dataset hash, evaluator config hash); the line breaks where
  either changes, with the break explained; optional backfill onto the new population.
- `sample_size_plan`, `run_band_for`, `dataset_history` (versions over time with the ceiling bound).

Every number comes from evalstats; this module only gathers the inputs from the database.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from annotation import selectors
from annotation.models import Dataset, DatasetVersion, Run
from calibration.grading import (
    RunGrades,
    answer_grade,
    answer_values,
    rule_verdict,
    run_grades,
    version_records_for,
)
from annotation.queue_selectors import OPERATOR, BlindScope
from evalstats.band import difference_verdict, run_band
from evalstats.manifest import ceiling_after_adding
from evalstats.paired import n_for_gap, paired_counts, resolvable_gap
from evalapp.errors import Problem, ServiceError
from evalapp.validation import iters_problem, raise_problems, seed_problem

PINNED = ("model_snapshot", "prompt_hash", "evaluator_version", "evaluator_config_hash", "harness_commit", "index_id")
DEFAULT_DISCORDANT_RATE = 0.15
PLANNER_NS = (100, 200, 300, 500, 1000, 2000, 5000, 10000)

FAILURE_CATEGORIES = ("not_retrieved", "retrieved_not_in_prompt", "generation", "no_gold")
FAILURE_LABELS = {
    "not_retrieved": "gold chunk not retrieved",
    "retrieved_not_in_prompt": "retrieved but not in the prompt",
    "generation": "in the prompt and still wrong",
    "no_gold": "no gold passage (no-answer question)",
}


# ---------------------------------------------------------------------------------------------
# shared pieces


def run_summary(run: Run) -> dict:
    """The run record's identifying and pinned fields."""
    return {"run_id": run.run_id, "system": run.system,
            "dataset": run.dataset.name if run.dataset_id else None,
            "dataset_hash": run.dataset_hash,
            "version": run.dataset_version.number if run.dataset_version_id else None,
            "started_at": run.started_at.isoformat() if run.started_at else None,
            **{k: getattr(run, k) for k in PINNED}}


def stale_gold_report(version: DatasetVersion | None, paired: set[str] | None = None) -> dict | None:
    """The stale-gold check of a version (annotation.selectors.stale_gold), with how many of the
    given (paired, failing…) questions it touches. None when the run has no dataset version."""
    if version is None:
        return None
    report = selectors.stale_gold(version)
    stale_qids = sorted(s["qid"] for s in report["stale"])
    return {"dataset_hash": report["dataset_hash"], "checked": report["checked"],
            "stale": len(stale_qids), "stale_share": report["stale_share"], "stale_qids": stale_qids[:100],
            "moved": len(report["moved"]),
            "stale_in_paired": len(set(stale_qids) & paired) if paired is not None else None,
            **({"_stale_all": stale_qids} if paired is None else {})}


# ---------------------------------------------------------------------------------------------
# run-to-run band


def repeat_runs(run: Run, *, scope: BlindScope = OPERATOR) -> list[Run]:
    """Runs of the same system with every pinned input and the dataset hash unchanged (itself included),
    leaving out runs in the viewer's blind `scope` (the band's mean would give their score away)."""
    return list(Run.objects.filter(system=run.system, dataset_hash=run.dataset_hash,
                                   **{k: getattr(run, k) for k in PINNED})
                .exclude(pk__in=scope.run_ids)
                .select_related("dataset_version").order_by("started_at", "run_id"))


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
    return {"runs": [rid for rid, _ in scored], "n_runs": band.n_runs, "mean_points": band.mean,
            "sd_points": band.sd, "lo_points": band.lo, "hi_points": band.hi, "width_points": band.width}


# ---------------------------------------------------------------------------------------------
# paired comparison


def _verdict(diff_points: float, ci95: tuple[float, float], band: dict | None, resolvable: float,
             discordant_rate: float) -> dict:
    if band is not None:
        v = difference_verdict(diff_points, ci95, band["width_points"])
        out = {"status": v.status, "words": v.words, "clears_interval": v.clears_interval,
               "clears_band": v.clears_band}
    else:
        lo, hi = ci95
        clears = lo > 0 or hi < 0
        ci = f"[{lo:.1f}, {hi:.1f}]"
        if clears:
            status = "band unmeasured"
            words = (f"{diff_points:+.1f} points: its 95% interval {ci} excludes zero, but no run-to-run band "
                     f"is measured (import two or more repeat runs of an unchanged system), so rerun noise "
                     f"is not ruled out.")
        else:
            status = "the set is too small to resolve it"
            words = (f"{diff_points:+.1f} points: the set is too small to resolve it; its 95% interval {ci} "
                     f"includes zero (this set resolves gaps of {resolvable:.1f} points).")
        out = {"status": status, "words": words, "clears_interval": clears, "clears_band": None}
    gap = abs(diff_points)
    out["n_needed_for_this_gap"] = (n_for_gap(gap, discordant_rate=discordant_rate)
                                    if gap > 0 and discordant_rate > 0 else None)
    return out


def _run_by_id(run_id: str, scope: BlindScope = OPERATOR) -> Run:
    """The run, or ServiceError (404); PermissionDenied when the viewer's blind `scope` hides its results."""
    run = Run.objects.select_related("dataset", "dataset_version").filter(run_id=run_id).first()
    if run is None:
        raise ServiceError(f"unknown run {run_id!r}", [Problem(f"no run {run_id!r} is imported", field="run")],
                           code=2, status=404)
    scope.check_run(run)
    return run


def _paired_outcomes(ga: RunGrades, gb: RunGrades) -> dict[str, frozenset[str]]:
    """The questions both runs scored, split by outcome: `paired` (all of them), `both_right`,
    `b_only` (only B right) and `a_only` (only A right: the regressions)."""
    return {"paired": ga.scored & gb.scored, "both_right": ga.right & gb.right,
            "b_only": gb.right & ga.wrong, "a_only": ga.right & gb.wrong}


def _paired_stats(outcomes: dict[str, set[str]], *, iters: int, seed: int):
    both, b_only = len(outcomes["both_right"]), len(outcomes["b_only"])
    return paired_counts(n=len(outcomes["paired"]), a_right=both + len(outcomes["a_only"]),
                         b_right=both + b_only, b_only=b_only, regressions=outcomes["a_only"],
                         iters=iters, seed=seed)


def _stratum_sets(version: DatasetVersion | None, fallback: DatasetVersion | None,
                  qids: frozenset[str]) -> dict[str, frozenset[str]]:
    """stratum -> those of `qids` in it, by `version`, then by `fallback` for qids `version` lacks;
    the rest under "(unknown)". Sorted by stratum name."""
    out: dict[str, frozenset[str]] = {}
    left = qids
    for v in (version, fallback):
        if v is None or not left:
            continue
        for name, members in selectors.version_stratum_qids(v).items():
            found = left.intersection(members)
            if found:
                out[name] = out[name] | found if name in out else found
        left = left.difference(*out.values()) if sum(map(len, out.values())) < len(qids) else frozenset()
    if left:
        out["(unknown)"] = left
    return dict(sorted(out.items()))


def compare_runs(*, run_a: str, run_b: str, iters: int = 10_000, seed: int = 0, check_stale: bool = True,
                 band_runs: Sequence[str] | None = None, grades: tuple[RunGrades, RunGrades] | None = None,
                 strata: bool = True, scope: BlindScope = OPERATOR) -> dict:
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
    ga, gb = grades if grades is not None else (run_grades(a), run_grades(b))
    # The pairing is set algebra over qids (in C, a million in well under a second), and the
    # statistics need only its counts: see evalstats.paired.paired_counts.
    outcomes = _paired_outcomes(ga, gb)
    n_both_answered = (len(outcomes["paired"]) if not (ga.unscored or gb.unscored)
                       else len(ga.answered & gb.answered))
    if not n_both_answered:
        raise ServiceError(f"runs {a.run_id!r} and {b.run_id!r} answered no question in common",
                           [Problem("no shared qid", field="b")])
    if not outcomes["paired"]:
        raise ServiceError(f"runs {a.run_id!r} and {b.run_id!r} share {n_both_answered} questions but none "
                           f"is scored in both yet (awaiting grades)", code=3, status=409)
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
            f"labels is a different number. Compared only on the {n} questions both answered and both scored.")
    if a.dataset_id != b.dataset_id:
        warnings.append(f"the runs are on different datasets ({run_summary(a)['dataset']} vs {run_summary(b)['dataset']})")
    dropped = {"answered_only_a": len(ga.answered) - n_both_answered,
               "answered_only_b": len(gb.answered) - n_both_answered, "unscored": n_both_answered - n}
    if dropped["unscored"] or dropped["answered_only_a"] or dropped["answered_only_b"]:
        warnings.append(f"{n} questions paired; {sum(dropped.values())} dropped "
                        f"({dropped['answered_only_a']} answered only by A, {dropped['answered_only_b']} only by B, "
                        f"{dropped['unscored']} not scored in both)")
    stale = {}
    for report in stale_reports:
        report["stale_in_paired"] = len(outcomes["paired"].intersection(report.pop("_stale_all")))
        stale[report["dataset_hash"]] = report
        if report["stale"]:
            warnings.append(f"{report['stale']} gold label(s) of {report['dataset_hash'][:19]}… are stale "
                            f"({report['stale_in_paired']} among the paired questions): their gold_text "
                            f"is no longer in the live corpus")

    # Strata from B's version (A's for questions B's version lacks): the population the newer number
    # claims to measure.
    per_stratum = {}
    if strata:
        for name, members in _stratum_sets(b.dataset_version or a.dataset_version,
                                           a.dataset_version if a.dataset_version_id != b.dataset_version_id else None,
                                           outcomes["paired"]).items():
            s = _paired_stats({k: members.intersection(v) if k != "paired" else members
                               for k, v in outcomes.items()}, iters=iters, seed=seed)
            per_stratum[name] = {"n": s.n, "a_score": s.a_score, "b_score": s.b_score, "diff_points": s.diff_points,
                                 "ci95": list(s.ci95), "b_only": s.b_only, "a_only": s.a_only,
                                 "resolvable_gap_points": s.resolvable_gap_points,
                                 "regressions": len(s.regressions)}

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
    out.update({
        "run_a": run_summary(a), "run_b": run_summary(b),
        "dataset_hash_match": hash_match,
        "pairing": {"paired": n, "dropped": sum(dropped.values()), **dropped},
        "grading": {"a": ga.summary(), "b": gb.summary()},
        "differs": {k: [getattr(a, k), getattr(b, k)] for k in PINNED if getattr(a, k) != getattr(b, k)},
        "discordant_rate": discordant_rate,
        "per_stratum": per_stratum if strata else None,
        "stale_gold": stale,
        "band": band,
        "verdict": _verdict(cmp.diff_points, cmp.ci95, band, cmp.resolvable_gap_points, discordant_rate),
        "iters": iters, "seed": seed,
        "warnings": warnings,
    })
    return out


def regression_detail(*, run_a: str, run_b: str, qid: str, scope: BlindScope = OPERATOR) -> dict:
    """One question of a comparison opened: the question, its gold passage, and both answers (refused
    when either run is in the viewer's blind `scope`)."""
    a, b = _run_by_id(run_a, scope), _run_by_id(run_b, scope)
    version = b.dataset_version or a.dataset_version
    record = selectors.version_record(version, qid) or selectors.version_record(a.dataset_version, qid)
    answers = {}
    for key, run in (("a", a), ("b", b)):
        row = next(answer_values(run, {qid}, "answer", "correct", "final_verdict", "retrieved", "prompt_chunks"), None)
        if row is None:
            raise ServiceError(f"run {run.run_id!r} has no answer to {qid!r}", [Problem("unknown qid", field="qid")],
                               status=404)
        answers[key] = {"run_id": run.run_id, "answer": row[1], "correct": row[2], "final_verdict": row[3],
                        "retrieved": row[4], "prompt_chunks": row[5]}
    for key, run in (("a", a), ("b", b)):
        answers[key]["graded"], answers[key]["graded_by"] = answer_grade(run, qid)
    passage = (record or {}).get("gold_text")
    passage_from = "gold_text" if passage else None
    if not passage and (record or {}).get("gold_chunk_id"):
        found = selectors.chunk_with_neighbours(record["gold_chunk_id"], around=0)
        if found is not None:
            passage, passage_from = found[0].text, ("retired chunk" if found[0].retired else "live chunk")
    return {"qid": qid, "question": (record or {}).get("question"), "stratum": (record or {}).get("stratum"),
            "gold_passage": passage, "gold_passage_from": passage_from,
            "gold_chunk_id": (record or {}).get("gold_chunk_id"), "gold_text": (record or {}).get("gold_text"),
            "expected": (record or {}).get("expected"), "grading": (record or {}).get("grading"),
            "a": answers["a"], "b": answers["b"]}


# ---------------------------------------------------------------------------------------------
# failure attribution


def classify_failure(gold_chunk_id: str | None, retrieved: list, prompt_chunks: list) -> tuple[str, int | None]:
    """(category, rank) of one failing answer from its fields; rank where the gold chunk was retrieved."""
    if not gold_chunk_id:
        return "no_gold", None
    rank = None
    for item in retrieved or []:
        if isinstance(item, dict) and item.get("chunk_id") == gold_chunk_id:
            r = item.get("rank")
            rank = r if rank is None or (isinstance(r, int) and r < rank) else rank
    if gold_chunk_id in (prompt_chunks or []):
        return "generation", rank
    if rank is None:
        return "not_retrieved", None
    return "retrieved_not_in_prompt", rank


def failure_attribution(run_id: str, *, stratum: str | None = None, limit: int | None = None,
                        scope: BlindScope = OPERATOR) -> dict:
    """Each failing answer of a run classified: gold chunk not retrieved; retrieved at rank r but not in
    the prompt; in the prompt and still wrong (generation); no gold passage. Counts per stratum.
    Refused for a run in the viewer's blind `scope`."""
    run = _run_by_id(run_id, scope)
    grades = run_grades(run)
    failing = {q for q, ok in grades.scores.items() if not ok}
    records = version_records_for(run.dataset_version, failing)
    strata = {q: (records.get(q) or {}).get("stratum") or "(unknown)" for q in failing}
    if stratum:
        failing = {q for q in failing if strata[q] == stratum}
    counts: Counter = Counter()
    ranks: Counter = Counter()
    per: dict[str, dict] = {}
    items = []
    scored_by_stratum: Counter = Counter()
    if grades.scores:
        all_strata = selectors.version_strata(run.dataset_version)
        for q in grades.scores:
            scored_by_stratum[all_strata.get(q, "(unknown)")] += 1
    for qid, retrieved, prompt_chunks in answer_values(run, failing, "retrieved", "prompt_chunks"):
        record = records.get(qid) or {}
        category, rank = classify_failure(record.get("gold_chunk_id"), retrieved, prompt_chunks)
        counts[category] += 1
        s = strata[qid]
        bucket = per.setdefault(s, {"scored": scored_by_stratum.get(s, 0), "failing": 0,
                                    "counts": dict.fromkeys(FAILURE_CATEGORIES, 0)})
        bucket["failing"] += 1
        bucket["counts"][category] += 1
        if category == "retrieved_not_in_prompt" and rank is not None:
            ranks[rank] += 1
        items.append({"qid": qid, "stratum": s, "category": category, "rank": rank,
                      "gold_chunk_id": record.get("gold_chunk_id")})
    items.sort(key=lambda i: i["qid"])
    return {"run": run_summary(run), "answered": len(grades.answered), "scored": grades.n_scored,
            "failing": len(items), "stratum": stratum or None,
            "counts": {c: counts.get(c, 0) for c in FAILURE_CATEGORIES},
            "labels": FAILURE_LABELS,
            "ranks_not_in_prompt": {str(r): ranks[r] for r in sorted(ranks)},
            "per_stratum": {s: per[s] for s in sorted(per)},
            "ungraded": grades.ungraded,
            "failures": items if limit is None else items[:limit]}


# ---------------------------------------------------------------------------------------------
# sample-size planner


# Beyond these the planner's answers overflow a float (and mean nothing): a billion questions, a
# thousandth of a point.
PLANNER_N_MAX = 10**9
PLANNER_GAP_MIN = 0.001


def sample_size_plan(*, n: int | None = None, gap_points: float | None = None,
                     discordant_rate: float | None = None, rate_from: str | None = None) -> dict:
    """For a set of n, the smallest resolvable gap; for a gap, the n needed (evalstats.paired).

    The discordance rate (share of questions two systems answer differently) drives both; without a
    measured one the planner says it assumes DEFAULT_DISCORDANT_RATE."""
    problems = []
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= PLANNER_N_MAX):
        problems.append(Problem(f"n must be a whole number from 1 to {PLANNER_N_MAX}, got {n!r}", field="n"))
    if gap_points is not None and not (isinstance(gap_points, int | float) and math.isfinite(gap_points)
                                       and PLANNER_GAP_MIN <= gap_points <= 100):
        problems.append(Problem(f"gap must be a number of points from {PLANNER_GAP_MIN:g} to 100, got {gap_points!r}",
                                field="gap"))
    if discordant_rate is not None and not (isinstance(discordant_rate, int | float) and 0 < discordant_rate <= 1):
        problems.append(Problem(f"discordant_rate must be in (0, 1], got {discordant_rate!r}", field="discordant_rate"))
    if problems:
        raise ServiceError("bad planner input", problems)
    assumed = discordant_rate is None
    d = DEFAULT_DISCORDANT_RATE if assumed else float(discordant_rate)
    return {
        "discordant_rate": d,
        "discordant_rate_from": "assumed default" if assumed else (rate_from or "given"),
        "n": n,
        "resolvable_gap_points": resolvable_gap(n, discordant_rate=d) if n else None,
        "gap_points": gap_points,
        "n_needed": n_for_gap(gap_points, discordant_rate=d) if gap_points else None,
        "table": [{"n": k, "resolvable_gap_points": resolvable_gap(k, discordant_rate=d)} for k in PLANNER_NS],
    }


def discordance_for_dataset(dataset: Dataset, *, scope: BlindScope = OPERATOR) -> tuple[float | None, str | None]:
    """The discordance rate of the two most recent runs of different systems on the dataset's latest
    version, to feed the planner; (None, None) when there are no two such runs. Runs in the viewer's
    blind `scope` are not used."""
    latest = selectors.latest_version(dataset)
    if latest is None:
        return None, None
    runs = list(Run.objects.filter(dataset_version=latest).exclude(pk__in=scope.run_ids)
                .order_by("-started_at", "-imported_at")[:20])
    for i, r1 in enumerate(runs):
        for r2 in runs[i + 1:]:
            if r2.system == r1.system:
                continue
            g1, g2 = run_grades(r1), run_grades(r2)
            both = [q for q in g1.scores if q in g2.scores]
            if both:
                disc = sum(1 for q in both if g1.scores[q] != g2.scores[q]) / len(both)
                if disc > 0:
                    return disc, f"runs {r2.run_id} vs {r1.run_id}"
    return None, None


# ---------------------------------------------------------------------------------------------
# dataset versions over time


def _run_point(run: Run, grades: RunGrades | None = None, *, scope: BlindScope = OPERATOR) -> dict:
    """A run as a point of a series or history: its score and how many answers it rests on, withheld
    (None, `blind`) for a run in the viewer's blind `scope`."""
    point = {"run_id": run.run_id, "system": run.system, "score": None, "n": None,
             "started_at": (run.started_at or run.imported_at).isoformat(),
             "evaluator_config_hash": run.evaluator_config_hash, "blind": not scope.can_read_run(run.pk)}
    if not point["blind"]:
        g = grades or run_grades(run)
        point.update(score=g.score(), n=g.n_scored)
    return point


def relabel_audits_by_version(dataset: Dataset) -> dict[int, list[dict]]:
    """Relabel audits (issue 5) of a version diff's modified batch, by the version they audit."""
    try:
        from annotation.models import RelabelAudit
    except ImportError:
        return {}
    out: dict[int, list[dict]] = defaultdict(list)
    for audit in RelabelAudit.objects.filter(source="diff").order_by("id"):
        criteria = audit.criteria or {}
        if criteria.get("dataset") != dataset.name or not criteria.get("new"):
            continue
        try:
            version = selectors.version_get(dataset, str(criteria["new"]))
        except ServiceError:
            continue
        out[version.pk].append({"id": audit.pk, "name": audit.name, "status": audit.status,
                                "url": f"/audits/{audit.pk}/"})
    return out


def dataset_history(name: str, *, scope: BlindScope = OPERATOR) -> dict:
    """The dataset's versions, oldest first, with hashes, counts, the runs scored on each, and for a
    grown version the ceiling: the best aggregate the added examples alone could produce from a system's
    score on the previous version (evalstats.manifest.ceiling_after_adding). A newer score above
    the ceiling cannot be explained by the additions. Runs in the viewer's blind `scope` are listed
    without a score and take part in no movement or ceiling."""
    dataset = selectors.dataset_get(name)
    versions = list(dataset.versions.order_by("number"))
    runs_by_version: dict[int, list[Run]] = defaultdict(list)
    for run in Run.objects.filter(dataset=dataset).order_by("started_at", "imported_at"):
        if run.dataset_version_id:
            runs_by_version[run.dataset_version_id].append(run)
    out = []
    prev = None
    grades_cache: dict[int, RunGrades] = {}
    audits = relabel_audits_by_version(dataset)

    def grades_of(run):
        if run.pk not in grades_cache:
            grades_cache[run.pk] = run_grades(run)
        return grades_cache[run.pk]

    for v in versions:
        entry = {"number": v.number, "dataset_hash": v.dataset_hash, "source": v.source, "note": v.note,
                 "created_at": v.created_at.isoformat(), "examples": v.examples, "added": v.added,
                 "removed": v.removed, "modified": v.modified, "unchanged": v.unchanged,
                 "audit_url": f"/api/datasets/{dataset.name}/audit/" if v.modified else None,
                 "relabel_audits": audits.get(v.pk, []) if v.modified else [],
                 "runs": [_run_point(r, None if r.pk in scope.run_ids else grades_of(r), scope=scope)
                          for r in runs_by_version.get(v.pk, [])],
                 "ceilings": [], "movements": []}
        if prev is not None:
            # The movement of each system's latest score from the previous version, decomposed by partition
            # (intersection re-score; contributions that sum to the delta), when both runs cover their versions.
            latest_old = {r.system: r for r in runs_by_version.get(prev.pk, []) if r.pk not in scope.run_ids}
            for system, new_run in {r.system: r for r in runs_by_version.get(v.pk, [])
                                    if r.pk not in scope.run_ids}.items():
                old_run = latest_old.get(system)
                if old_run is None:
                    continue
                try:
                    moved = selectors.dataset_diff(dataset, str(prev.number), str(v.number),
                                                   run_old=old_run, run_new=new_run)["movement"]
                except ServiceError as exc:
                    entry["movements"].append({"system": system, "old_run": old_run.run_id,
                                               "new_run": new_run.run_id, "error": exc.message})
                    continue
                entry["movements"].append({"system": system, "old_run": old_run.run_id, "new_run": new_run.run_id,
                                           **moved})
        if prev is not None and v.added:
            diff = selectors.version_diff(prev, v)
            kept = diff.unchanged + diff.modified
            latest_new = {r.system: r for r in runs_by_version.get(v.pk, []) if r.pk not in scope.run_ids}
            for old_run in {r.system: r for r in runs_by_version.get(prev.pk, [])
                            if r.pk not in scope.run_ids}.values():
                right, wrong = grades_of(old_run).tally(kept)
                if not right + wrong:
                    continue
                old_score = right / (right + wrong)
                ceiling = ceiling_after_adding(right + wrong, old_score, len(diff.added))
                new_run = latest_new.get(old_run.system)
                new_score = grades_of(new_run).score() if new_run else None
                entry["ceilings"].append({
                    "system": old_run.system, "old_run": old_run.run_id, "old_score": old_score,
                    "n_kept": right + wrong, "n_added": len(diff.added), "ceiling": ceiling,
                    "new_run": new_run.run_id if new_run else None, "new_score": new_score,
                    "exceeds_ceiling": (new_score is not None and new_score > ceiling + 1e-12),
                })
        out.append(entry)
        prev = v
    return {"dataset": dataset.name, "versions": out}


# ---------------------------------------------------------------------------------------------
# series


def _version_key(run: Run) -> tuple[str, str]:
    return (run.dataset_hash, run.evaluator_config_hash)


def rescore_on_version(run: Run, version: DatasetVersion, grades: RunGrades | None = None) -> dict:
    """Re-score a run on another version of its dataset where its inputs still resolve.

    Unchanged questions keep their grade; a modified or added question resolves only if the run
    answered it and its rule (span, extraction) can grade the answer against the new record: the
    harness's score and the human labels were given against the old gold. Resolved only if every
    question of the version resolves."""
    g = grades or run_grades(run)
    old_m = selectors.version_manifest(run.dataset_version) if run.dataset_version_id else {}
    new_m = selectors.version_manifest(version)
    scores: dict[str, bool] = {}
    to_regrade = set()
    missing = ungraded = 0
    for q, sha in new_m.items():
        if q not in g.answered:
            missing += 1
        elif old_m.get(q) == sha:
            if q in g.scores:
                scores[q] = g.scores[q]
            else:
                ungraded += 1
        else:
            to_regrade.add(q)
    records = version_records_for(version, to_regrade)
    for q, text in answer_values(run, to_regrade, "answer"):
        verdict = rule_verdict(records.get(q), text)
        if verdict in ("correct", "incorrect"):
            scores[q] = verdict == "correct"
        else:
            ungraded += 1
    resolved = missing == 0 and ungraded == 0 and len(scores) == len(new_m)
    return {"run_id": run.run_id, "dataset_hash": version.dataset_hash, "resolved": resolved,
            "score": sum(scores.values()) / len(scores) if resolved and scores else None,
            "n": len(scores), "missing_answers": missing, "ungradable": ungraded,
            "regraded_by_rule": len(to_regrade) - ungraded if to_regrade else 0}


def _break_info(prev: Run, cur: Run, versions: dict[str, DatasetVersion]) -> dict:
    changed = []
    info: dict = {"after_run": prev.run_id, "before_run": cur.run_id}
    if prev.dataset_hash != cur.dataset_hash:
        changed.append("dataset_hash")
        old_v, new_v = versions.get(prev.dataset_hash), versions.get(cur.dataset_hash)
        ds = {"from": prev.dataset_hash, "to": cur.dataset_hash,
              "from_version": old_v.number if old_v else None, "to_version": new_v.number if new_v else None,
              "from_examples": old_v.examples if old_v else None, "to_examples": new_v.examples if new_v else None}
        if old_v and new_v:
            d = selectors.version_diff(old_v, new_v)
            ds.update({"added": len(d.added), "removed": len(d.removed), "modified": len(d.modified),
                       "unchanged": len(d.unchanged)})
        info["dataset"] = ds
    if prev.evaluator_config_hash != cur.evaluator_config_hash:
        changed.append("evaluator_config_hash")
        info["evaluator_config"] = {"from": prev.evaluator_config_hash, "to": cur.evaluator_config_hash,
                                    "from_version": prev.evaluator_version, "to_version": cur.evaluator_version}
    info["changed"] = changed
    words = []
    if "dataset" in info:
        ds = info["dataset"]
        counts = (f": +{ds['added']} added, −{ds['removed']} removed, ~{ds['modified']} modified"
                  if "added" in ds else "")
        words.append(f"dataset v{ds['from_version'] or '?'} → v{ds['to_version'] or '?'}{counts} "
                     f"({ds['from_examples'] if ds['from_examples'] is not None else '?'} → "
                     f"{ds['to_examples'] if ds['to_examples'] is not None else '?'} examples)")
    if "evaluator_config" in info:
        ev = info["evaluator_config"]
        words.append(f"evaluator config {ev['from'][:19] or '(none)'} → {ev['to'][:19] or '(none)'}")
    info["text"] = "; ".join(words)
    return info


def series(*, dataset: str, systems: Sequence[str] | None = None, backfill: bool = False,
           scope: BlindScope = OPERATOR) -> dict:
    """Each system's score over time, split into segments keyed by (dataset hash, evaluator config hash):
    the line never joins two points measured on different populations or by different evaluators. Each
    break says what changed and the example counts. With `backfill`, runs of the segment before a
    dataset change are re-scored on the new version where their inputs still resolve (same evaluator).
    A run in the viewer's blind `scope` stays on its line without a score (`blind`), and is not backfilled."""
    ds = selectors.dataset_get(dataset)
    runs = Run.objects.filter(dataset=ds).select_related("dataset_version")
    if systems:
        known = set(Run.objects.filter(dataset=ds, system__in=systems).values_list("system", flat=True))
        unknown = [s for s in systems if s not in known]
        if unknown:
            raise ServiceError(f"no runs of system(s) {', '.join(map(repr, unknown))} on dataset {dataset!r}",
                               [Problem(f"unknown system {s!r}", field="system") for s in unknown], status=404)
        runs = runs.filter(system__in=systems)
    runs = sorted(runs, key=lambda r: ((r.started_at or r.imported_at), r.run_id))
    versions = {v.dataset_hash: v for v in ds.versions.all()}
    by_system: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        by_system[r.system].append(r)
    lines = []
    for system in sorted(by_system):
        segments, breaks = [], []
        prev = None
        for r in by_system[system]:
            g = run_grades(r) if scope.can_read_run(r.pk) else None
            point = {**_run_point(r, g, scope=scope), "dataset_hash": r.dataset_hash, "backfilled": False}
            if prev is None or _version_key(prev) != _version_key(r):
                if prev is not None:
                    breaks.append(_break_info(prev, r, versions))
                v = versions.get(r.dataset_hash)
                segments.append({"dataset_hash": r.dataset_hash, "evaluator_config_hash": r.evaluator_config_hash,
                                 "version": v.number if v else None, "examples": v.examples if v else None,
                                 "points": [], "backfilled": []})
            segments[-1]["points"].append(point)
            prev = r
        if backfill:
            for i in range(1, len(segments)):
                seg, before = segments[i], segments[i - 1]
                if before["evaluator_config_hash"] != seg["evaluator_config_hash"]:
                    continue
                version = versions.get(seg["dataset_hash"])
                if version is None:
                    continue
                for p in before["points"]:
                    if p["blind"]:
                        continue
                    run = next(r for r in by_system[system] if r.run_id == p["run_id"])
                    res = rescore_on_version(run, version)
                    res["started_at"] = p["started_at"]
                    seg["backfilled"].append(res)
        lines.append({"system": system, "segments": segments, "breaks": breaks})
    return {"dataset": ds.name, "systems": sorted(by_system), "backfill": backfill, "lines": lines}


def movement_ceiling(decomposition, diff) -> dict:
    """The ceiling for a grown set: the old run's score on the examples the new version kept, with every
    added example answered right (evalstats.manifest.ceiling_after_adding). A new aggregate
    above it cannot be explained by the additions: the system itself moved (or the labels did)."""
    n_kept = len(diff.unchanged) + len(diff.modified)
    new_aggregate = decomposition.new_aggregate
    if not n_kept:
        return {"ceiling": None, "reason": "the new version kept none of the old examples"}
    old_kept = (decomposition.old_sums["unchanged"] + decomposition.old_sums["modified"]) / n_kept
    ceiling = ceiling_after_adding(n_kept, old_kept, len(diff.added))
    exceeds = new_aggregate > ceiling + 1e-12
    return {"ceiling": ceiling, "n_kept": n_kept, "n_added": len(diff.added), "old_score_on_kept": old_kept,
            "new_aggregate": new_aggregate, "exceeds_ceiling": exceeds,
            "words": (f"adding {len(diff.added)} examples to {n_kept} scored at {old_kept:.3f} can lift the "
                      f"aggregate to at most {ceiling:.3f}; the new aggregate {new_aggregate:.3f} "
                      + ("exceeds it: the additions alone cannot explain the rise." if exceeds else "is within it."))}
