"""compare and diff_datasets give exactly the same objects as before their speed-ups, on a fixed world
(test_statements.build: span- and rubric-graded questions, relabelled, added and removed ones, runs that
regress and improve): the expected objects were written by the code before the change
(outputs_unchanged.json) and are compared whole."""

import json
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Answer, Run, VersionEntry
from annotation.selectors.datasets import dataset_get
from calibration.selectors.grades import run_grades
from comparisons.selectors.compare import compare_runs
from comparisons.selectors.diff import dataset_diff
from tests.comparisons.selectors.test_statements import build

pytestmark = pytest.mark.django_db

EXPECTED = Path(__file__).with_name("outputs_unchanged.json")
N = 300


def _outputs(tmp_path) -> dict:
    build(tmp_path, N)
    out = {"compare": compare_runs(run_a="A", run_b="B", iters=500)}
    for run_id in ("A", "C"):  # the diff needs every question scored
        Answer.objects.filter(run__run_id=run_id, correct__isnull=True, final_verdict="").update(correct=True)
    run_old, run_new = Run.objects.get(run_id="A"), Run.objects.get(run_id="C")
    out["diff"] = dataset_diff(dataset_get("support"), "1", "2", run_old=run_old, run_new=run_new)
    # Through JSON, as every caller renders it (tuples become lists).
    return json.loads(json.dumps(out, sort_keys=True, default=str))


def _stable(out: dict) -> dict:
    """Without the fields that hold the moment of the import (run start and import times)."""
    for side in ("run_a", "run_b"):
        for key in ("started_at", "imported_at"):
            out["compare"][side].pop(key, None)
    return out


def test_compare_and_diff_objects_are_unchanged_on_a_fixed_world(tmp_path):
    assert _stable(_outputs(tmp_path)) == json.loads(EXPECTED.read_text(encoding="utf-8"))


def test_answers_graded_by_their_human_label_read_no_question_record(tmp_path):
    """Grading rubric answers by their final human label needs no question record: no statement of the
    grading reads the records' text when no answer waits on a span or extraction rule."""
    build(tmp_path, 40)
    # Every answer the rule would grade gets a harness score: what is left are rubric answers.
    run = Run.objects.get(run_id="A")
    span = [a.qid for a in Answer.objects.filter(run=run, correct__isnull=True) if int(a.qid[2:]) % 5 < 2]
    Answer.objects.filter(run=run, qid__in=span).update(correct=True)
    with CaptureQueriesContext(connection) as ctx:
        grades = run_grades(run)
    assert not [q["sql"] for q in ctx.captured_queries if "canonical" in q["sql"]]
    assert grades.sources == {"harness": 40 // 5 + len(span), "human": 40 // 5}
    assert grades.n_scored == 40 - 40 // 5


def test_a_line_that_kept_no_rule_is_graded_by_its_record(tmp_path):
    """A version line written without its rule (NULL: before the column, or by a bulk writer) is graded by
    the rule of its record, as before: the same grades as with the rules kept."""
    build(tmp_path, 40)
    run = Run.objects.get(run_id="A")
    kept = run_grades(run)
    VersionEntry.objects.filter(version=run.dataset_version).update(grading=None)
    again = run_grades(run)
    assert (again.right, again.wrong, again.unscored, again.sources) == (
        kept.right,
        kept.wrong,
        kept.unscored,
        kept.sources,
    )
    assert kept.sources == {"harness": 40 // 5, "span": 2 * 40 // 5, "human": 40 // 5}
