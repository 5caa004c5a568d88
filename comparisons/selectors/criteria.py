"""Two runs compared on their dataset's criteria: on each ordinal criterion the paired bootstrap of the
per-question difference of the final human values (mean and interval), and, where the criterion has a
pass rule, the paired comparison of its correct/incorrect reading beside it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from annotation.models import Answer, Criterion, Run
from annotation.selectors.criterion_finals import criterion_finals
from calibration.selectors.grades import RunGrades
from evalapp.errors import Problem, ServiceError
from evalstats.criteria import Definition, definition
from evalstats.paired import paired_counts
from evalstats.paired_scores import paired_mean_diff


def _shared_criteria(a: Run, b: Run) -> list[Criterion]:
    """The latest version of each criterion both runs' datasets define alike (the same kind and values:
    a scale that differs between the two is not one score). One statement."""
    datasets = {d for d in (a.dataset_id, b.dataset_id) if d is not None}
    # Runs read by comparisons.selectors.runs._run_by_id say whether their dataset has criteria.
    if not datasets or not any(getattr(r, "has_criteria", True) for r in (a, b)):
        return []
    latest: dict[tuple[int, str], Criterion] = {}
    for c in Criterion.objects.filter(dataset_id__in=datasets).order_by("dataset_id", "name", "number"):
        latest[(c.dataset_id, c.name)] = c
    out = []
    for (dataset_id, name), c in sorted(latest.items(), key=lambda kv: kv[0][1]):
        if dataset_id != b.dataset_id and b.dataset_id is not None:
            continue
        other = latest.get((a.dataset_id, name)) if a.dataset_id is not None else c
        if other is not None and (other.kind, list(other.values)) == (c.kind, list(c.values)):
            out.append(c)
    return out


def _scorer(rule: Definition) -> tuple[Callable[[str], float], str]:
    """How a value becomes a number: the value itself when every value of the scale is a number (a 1-5
    rubric), else its position on the scale counted from 1 (poor/fair/good -> 1/2/3)."""
    try:
        numbers = {v: float(v) for v in rule.values}
    except ValueError:
        return (lambda v: float(rule.rank(v) + 1)), "positions"
    return numbers.__getitem__, "values"


def _finals_by_qid(run: Run, name: str) -> dict[str, str]:
    """qid -> the run's final human value on the criterion (criterion_finals; disputed answers absent):
    two statements."""
    finals = criterion_finals(name=name, run_pk=run.pk)
    qids = dict(Answer.objects.filter(run_id=run.pk, criterion_labels__name=name).values_list("id", "qid").distinct())
    return {qids[answer_id]: value for answer_id, value in finals.items() if answer_id in qids}


def _latest_criteria(runs: Sequence[Run], name: str) -> dict[int, Criterion]:
    """dataset id -> the latest version of its criterion `name`, for the runs' datasets: one statement.
    ServiceError (404) naming the first run whose dataset has none."""
    found: dict[int, Criterion] = {}
    datasets = {r.dataset_id for r in runs if r.dataset_id is not None}
    for c in Criterion.objects.filter(dataset_id__in=datasets, name=name).order_by("number"):
        found[c.dataset_id] = c
    for run in runs:
        if run.dataset_id not in found:
            raise ServiceError(
                f"run {run.run_id!r}'s dataset has no criterion {name!r}",
                [Problem(f"unknown criterion {name!r} (define it with set_criterion)", field="criterion")],
                status=404,
            )
    return found


def criterion_grades(run: Run, name: str) -> RunGrades:
    """The run's answers graded by a criterion's pass rule on their final human value (criterion_grades_for)."""
    return criterion_grades_for([run], name)[run.pk]


def criterion_grades_for(runs: Sequence[Run], name: str) -> dict[int, RunGrades]:
    """run pk -> its answers graded by the criterion's pass rule on their final human value: `right` the
    answers whose value passes, `wrong` those whose value fails, `unscored` the rest (no value yet, or values
    that disagree: `disputed`), in the shape run_grades gives, so failures and series read either alike.
    Four statements however many runs. A criterion without a pass rule passes and fails nothing: refused
    (400), naming the fix; a run whose dataset lacks the criterion: 404."""
    criteria = _latest_criteria(runs, name)
    rules = {}
    for dataset_id, c in criteria.items():
        rule = definition(c.name, c.kind, c.values, c.pass_rule)
        if rule.passing is None:
            raise ServiceError(
                f"criterion {name!r} has no pass rule, so no answer passes or fails it",
                [Problem('give it one with set_criterion ... --pass (e.g. ">= 4")', field="criterion")],
            )
        rules[dataset_id] = rule
    pks = [r.pk for r in runs]
    finals = criterion_finals(name=name, run_pks=pks)
    labelled = Answer.objects.filter(run_id__in=pks, criterion_labels__name=name)
    where: dict[int, tuple[int, str]] = {
        answer_id: (run_pk, qid) for answer_id, run_pk, qid in labelled.values_list("id", "run_id", "qid").distinct()
    }
    answered: dict[int, set[str]] = {pk: set() for pk in pks}
    for run_pk, qid in Answer.objects.filter(run_id__in=pks).values_list("run_id", "qid").iterator(chunk_size=10_000):
        answered[run_pk].add(qid)
    given: dict[int, set[str]] = {pk: set() for pk in pks}
    final_of: dict[int, dict[str, str]] = {pk: {} for pk in pks}
    for answer_id, (run_pk, qid) in where.items():
        given[run_pk].add(qid)
        if answer_id in finals:
            final_of[run_pk][qid] = finals[answer_id]
    out = {}
    for run in runs:
        rule = rules[run.dataset_id or 0]
        passing = rule.passing or frozenset()
        values = final_of[run.pk]
        right = frozenset(q for q, v in values.items() if v in passing)
        wrong = frozenset(values) - right
        every = frozenset(answered[run.pk])
        disputed = frozenset(given[run.pk] - values.keys())
        unscored = every - right - wrong
        ungraded = {}
        if unscored - disputed:
            ungraded[f"no value on {name}"] = len(unscored - disputed)
        if disputed:
            ungraded[f"values on {name} disagree"] = len(disputed)
        out[run.pk] = RunGrades(
            run_id=run.run_id,
            right=right,
            wrong=wrong,
            unscored=unscored,
            sources={f"criterion {name} ({rule.pass_rule})": len(right) + len(wrong)} if values else {},
            ungraded=ungraded,
            disputed=disputed,
        )
    return out


def criteria_comparison(a: Run, b: Run, *, iters: int, seed: int) -> dict[str, dict[str, Any]]:
    """name -> the comparison on that criterion for each criterion the runs share: `n` (questions with a
    final value in both runs), `mean_a`, `mean_b`, `diff` (mean of B - A), `ci95` (paired bootstrap, or
    None with `reason`), `se`, the improved/worsened/tied counts and `scale` ("values" or "positions")
    for ordinal criteria; `pass_rule` (the paired comparison of the rule's correct/incorrect reading:
    n, a_score, b_score, diff_points, ci95, regressions) where it has one. Empty when the runs' datasets
    define no criteria, so a dataset without them compares exactly as before."""
    out: dict[str, dict[str, Any]] = {}
    for c in _shared_criteria(a, b):
        rule = definition(c.name, c.kind, c.values, c.pass_rule)
        if rule.kind != "ordinal" and rule.passing is None:
            continue
        fa, fb = _finals_by_qid(a, c.name), _finals_by_qid(b, c.name)
        known = set(rule.values)
        paired = sorted(q for q in fa.keys() & fb.keys() if fa[q] in known and fb[q] in known)
        entry: dict[str, Any] = {"kind": rule.kind, "version": c.number, "values": list(rule.values)}
        if rule.kind == "ordinal":
            score, scale = _scorer(rule)
            means = paired_mean_diff(
                [score(fa[q]) for q in paired], [score(fb[q]) for q in paired], iters=iters, seed=seed
            ).to_dict()
            entry.update({**{k: v for k, v in means.items() if k != "iters"}, "scale": scale})
        else:
            entry["n"] = len(paired)
        if rule.passing is not None:
            entry["pass_rule"] = _pass_rule_comparison(rule, paired, fa, fb, iters=iters, seed=seed)
        out[c.name] = entry
    return out


def _pass_rule_comparison(
    rule: Definition, paired: list[str], fa: dict[str, str], fb: dict[str, str], *, iters: int, seed: int
) -> dict[str, Any]:
    passing = rule.passing or frozenset()
    if not paired:
        return {"rule": rule.pass_rule, "n": 0, "reason": "no question has a final value in both runs"}
    a_pass = {q for q in paired if fa[q] in passing}
    b_pass = {q for q in paired if fb[q] in passing}
    s = paired_counts(
        n=len(paired),
        a_right=len(a_pass),
        b_right=len(b_pass),
        b_only=len(b_pass - a_pass),
        regressions=frozenset(a_pass - b_pass),
        iters=iters,
        seed=seed,
    )
    return {
        "rule": rule.pass_rule,
        "n": s.n,
        "a_score": s.a_score,
        "b_score": s.b_score,
        "diff_points": s.diff_points,
        "ci95": list(s.ci95),
        "ci95_method": s.ci95_method,
        "ci95_reason": s.ci95_reason,
        "regressions": sorted(s.regressions),
    }
