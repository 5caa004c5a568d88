"""The score of many runs at once, for the lists that show one point per run (series, dataset history)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count

from annotation.models import Answer, Run
from calibration.selectors.grades import RunGrades, run_grades

# Runs per grouped query: far under every database's parameter limit.
_RUNS_PER_QUERY = 1000


@dataclass(frozen=True)
class HarnessScore:
    """A run every answer of which carries the harness's own score: its counts are all a point needs,
    and they are what calibration.selectors.grades.run_grades would count (one answer per qid)."""

    right: int
    wrong: int

    @property
    def n_scored(self) -> int:
        return self.right + self.wrong

    def score(self) -> float | None:
        return self.right / self.n_scored if self.n_scored else None


def run_scores(runs: Sequence[Run]) -> dict[int, HarnessScore | RunGrades]:
    """run pk -> its score (`score()`, `n_scored`), for every given run. One grouped count of the answers
    by harness score for all of them; a run with answers the harness left unscored is graded in full
    by run_grades (its rules, judge verdicts and human labels), which costs statements of its own."""
    counts: dict[int, dict] = {r.pk: {} for r in runs}
    pks = list(counts)
    for start in range(0, len(pks), _RUNS_PER_QUERY):
        rows = (
            Answer.objects.filter(run_id__in=pks[start : start + _RUNS_PER_QUERY])
            .values("run_id", "correct")
            .annotate(n=Count("id"))
            .order_by()
            .values_list("run_id", "correct", "n")
        )
        for run_id, correct, n in rows:
            key = None if correct is None else bool(correct)
            counts[run_id][key] = counts[run_id].get(key, 0) + n
    out: dict[int, HarnessScore | RunGrades] = {}
    for run in runs:
        c = counts[run.pk]
        out[run.pk] = run_grades(run) if c.get(None) else HarnessScore(right=c.get(True, 0), wrong=c.get(False, 0))
    return out
