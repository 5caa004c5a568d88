"""The label import writes in bulk what writing each line through label_write would leave: the same labels,
the same history (who, when, why, what was replaced), the same final labels; and its statements, like
those of the final-label refresh and of a queue over labelled answers, do not grow with the number of
answers."""

from datetime import datetime

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.models import Adjudication, Answer, HumanLabel, LabelEvent, QueueItem
from annotation.services.label_import import labels_import
from annotation.services.labels import adjudication_record, final_label_refresh, label_write
from annotation.services.queues import queue_create
from tests.annotation.conftest import label
from tests.conftest import write_jsonl

REASON = "second pass of the June audit"


def _at(day: int) -> str:
    return f"2020-06-{day:02d}T10:00:00Z"


def _when(value, starts):
    """A time one of the compared steps took from the clock (different on each side) as the number of that
    step; a time given in a file, or written before the steps, as is."""
    if value is None or value < starts[0]:
        return value
    return f"step {max(i for i, start in enumerate(starts, 1) if value >= start)}"


def _state(run_id, starts):
    """Every row the import can touch, by natural keys (usernames, qids), without row ids; events in order."""
    labels = sorted(
        (
            a,
            u,
            v,
            r,
            s,
            _when(at, starts),
            sec,
            rnd,
        )
        for a, u, v, r, s, at, sec, rnd in HumanLabel.objects.filter(answer__run__run_id=run_id).values_list(
            "answer__qid",
            "annotator__username",
            "verdict",
            "rationale",
            "source",
            "labelled_at",
            "active_seconds",
            "round",
        )
    )
    events = [
        (*row[:-1], _when(row[-1], starts))
        for row in LabelEvent.objects.filter(answer__run__run_id=run_id)
        .order_by("id")
        .values_list(
            "answer__qid",
            "annotator__username",
            "old_verdict",
            "new_verdict",
            "rationale",
            "source",
            "round",
            "reason",
            "by__username",
            "at",
        )
    ]
    answers = [
        (qid, final, source, _when(changed, starts))
        for qid, final, source, changed in Answer.objects.filter(run__run_id=run_id)
        .order_by("qid")
        .values_list("qid", "final_verdict", "final_source", "final_changed_at")
    ]
    adjudications = sorted(
        Adjudication.objects.filter(answer__run__run_id=run_id).values_list(
            "answer__qid", "adjudicator__username", "verdict", "reason"
        )
    )
    users = sorted(get_user_model().objects.values_list("username", flat=True))
    return {"labels": labels, "events": events, "answers": answers, "adjudications": adjudications, "users": users}


def _one_by_one(lines, *, reason, by):
    """Each line written through label_write, in file order, the final labels refreshed once the file is
    written: the reference the bulk import must equal.

    Once per file, as the import has always done: a file is one act, and a final label its lines would only
    pass through (ann1's "correct" on an answer before ann3's "incorrect" on the next line) is no change,
    so a judge calibrated on the answer does not turn stale for it."""
    users = {u.username: u for u in get_user_model().objects.all()}
    answer_ids = []
    for line in lines:
        answer = Answer.objects.get(run__run_id=line["run_id"], qid=line["qid"])
        at = parse_datetime(line["labelled_at"]) if line.get("labelled_at") else None
        label_write(
            answer=answer,
            annotator=users[line["annotator"]],
            verdict=line["verdict"],
            rationale=line.get("rationale", ""),
            source="import",
            labelled_at=at,
            reason=reason,
            by=by,
            refresh_final=False,
        )
        answer_ids.append(answer.pk)
    final_label_refresh(answer_ids=answer_ids)


def _both_ways(steps, run_id, by):
    """The states after each step (file, reason) imported in bulk, and after each written line by line; each
    side runs in a transaction rolled back afterwards, so both start from the same state."""
    sides = []
    for bulk in (True, False):
        states, starts = [], []
        with transaction.atomic():
            for path, lines, reason in steps:
                starts.append(timezone.now())
                if bulk:
                    labels_import(path=path, replace=bool(reason), reason=reason, by=by)
                else:
                    _one_by_one(lines, reason=reason, by=by)
                states.append(_state(run_id, starts))
            transaction.set_rollback(True)
        sides.append(states)
    return sides


@pytest.mark.django_db
def test_a_bulk_import_leaves_exactly_what_writing_each_line_through_label_write_leaves(make_run, pool, tmp_path):
    run_id = make_run(10)
    answers = {a.qid: a for a in Answer.objects.filter(run__run_id=run_id)}
    ann1, ann2, ann3 = pool["ann1"], pool["ann2"], pool["ann3"]
    # What the team graded before (in the app and by an earlier import), shared by both sides.
    earlier = parse_datetime(_at(1))
    label_write(answer=answers["q-0002"], annotator=ann1, verdict="correct", source="import", labelled_at=earlier)
    label_write(answer=answers["q-0003"], annotator=ann1, verdict="correct", labelled_at=earlier)
    label_write(answer=answers["q-0004"], annotator=ann1, verdict="incorrect", source="import", labelled_at=earlier)
    label_write(answer=answers["q-0004"], annotator=ann2, verdict="correct", source="import", labelled_at=earlier)
    adjudication_record(answer=answers["q-0004"], adjudicator=pool["adj"], verdict="incorrect", reason="30 != 90")
    label_write(answer=answers["q-0005"], annotator=ann1, verdict="correct", rationale="says 30", labelled_at=earlier)
    label_write(answer=answers["q-0006"], annotator=ann1, verdict="incorrect", labelled_at=earlier)
    label_write(answer=answers["q-0008"], annotator=ann1, verdict="correct", labelled_at=earlier)
    label_write(answer=answers["q-0008"], annotator=ann2, verdict="correct", labelled_at=earlier)
    assert ann3.pk  # ann3 labels for the first time in the file

    first = [
        label(run_id, "q-0000", "ann1", "correct", labelled_at=_at(2)),  # two annotators agree
        label(run_id, "q-0000", "ann2", "correct", labelled_at=_at(2), rationale="30 days"),
        label(run_id, "q-0001", "ann1", "correct", labelled_at=_at(2)),  # two annotators disagree
        label(run_id, "q-0001", "ann3", "incorrect", labelled_at=_at(3)),
        label(run_id, "q-0002", "ann1", "correct", labelled_at=_at(4)),  # as it was: unchanged
        label(run_id, "q-0002", "ann2", "correct", labelled_at=_at(4)),
        label(run_id, "q-0003", "ann1", "incorrect", labelled_at=_at(4), rationale="misread"),  # changes their label
        label(run_id, "q-0004", "ann2", "incorrect", labelled_at=_at(5)),  # under an adjudication
        label(run_id, "q-0005", "ann1", "correct", labelled_at=_at(5), rationale="says thirty"),  # rationale only
        label(run_id, "q-0006", "ann1", "incorrect", labelled_at=_at(5)),  # unchanged, no rationale given
        label(run_id, "q-0007", "ann3", "incorrect"),  # no time given: the import's
        label(run_id, "q-0008", "ann3", "incorrect", labelled_at=_at(6)),  # a third label that disagrees
    ]
    second = [
        label(run_id, "q-0003", "ann1", "correct", labelled_at=_at(7)),  # changes it back
        label(run_id, "q-0001", "ann3", "correct", labelled_at=_at(7), rationale="on reflection"),  # now agrees
        label(run_id, "q-0009", "ann2", "correct", labelled_at=_at(7)),
        label(run_id, "q-0000", "ann2", "correct", labelled_at=_at(8)),  # same verdict, no rationale: unchanged
    ]
    steps = [
        (write_jsonl(tmp_path / "first.jsonl", first), first, REASON),
        (write_jsonl(tmp_path / "second.jsonl", second), second, "ann3 re-read the guideline"),
        (write_jsonl(tmp_path / "again.jsonl", second), second, ""),  # importing it again changes nothing
    ]

    bulk, one_by_one = _both_ways(steps, run_id, by=pool["eng"])

    assert bulk == one_by_one
    after_first, after_second, after_again = bulk
    earlier_changes = {
        qid: changed for qid, _v, _s, changed in after_first["answers"] if qid in ("q-0004", "q-0005", "q-0006")
    }
    assert after_first["answers"] == [
        ("q-0000", "correct", "agreement", "step 1"),
        ("q-0001", "", "", None),  # two annotators disagree: no final label, none in between either
        ("q-0002", "correct", "agreement", "step 1"),
        ("q-0003", "incorrect", "single", "step 1"),
        ("q-0004", "incorrect", "adjudication", earlier_changes["q-0004"]),  # the adjudication stands
        ("q-0005", "correct", "single", earlier_changes["q-0005"]),
        ("q-0006", "incorrect", "single", earlier_changes["q-0006"]),
        ("q-0007", "incorrect", "single", "step 1"),
        ("q-0008", "", "", "step 1"),
        ("q-0009", "", "", None),
    ]
    assert all(isinstance(changed, datetime) for changed in earlier_changes.values())  # set before the import
    assert after_first["events"][-10:] == [
        ("q-0000", "ann1", "", "correct", "", "import", 1, "", None, "step 1"),
        ("q-0000", "ann2", "", "correct", "30 days", "import", 1, "", None, "step 1"),
        ("q-0001", "ann1", "", "correct", "", "import", 1, "", None, "step 1"),
        ("q-0001", "ann3", "", "incorrect", "", "import", 1, "", None, "step 1"),
        ("q-0002", "ann2", "", "correct", "", "import", 1, "", None, "step 1"),
        ("q-0003", "ann1", "correct", "incorrect", "misread", "import", 1, REASON, "eng", "step 1"),
        ("q-0004", "ann2", "correct", "incorrect", "", "import", 1, REASON, "eng", "step 1"),
        ("q-0005", "ann1", "correct", "correct", "says thirty", "import", 1, REASON, "eng", "step 1"),
        ("q-0007", "ann3", "", "incorrect", "", "import", 1, "", None, "step 1"),
        ("q-0008", "ann3", "", "incorrect", "", "import", 1, "", None, "step 1"),
    ]
    assert ("q-0007", "ann3", "incorrect", "", "import", "step 1", None, 1) in after_first["labels"]
    assert [row for row in after_second["answers"] if row[3] == "step 2"] == [
        ("q-0001", "correct", "agreement", "step 2"),
        ("q-0003", "correct", "single", "step 2"),
        ("q-0009", "correct", "single", "step 2"),
    ]
    reason = "ann3 re-read the guideline"
    assert after_second["events"][len(after_first["events"]) :] == [
        ("q-0003", "ann1", "incorrect", "correct", "", "import", 1, reason, "eng", "step 2"),
        ("q-0001", "ann3", "incorrect", "correct", "on reflection", "import", 1, reason, "eng", "step 2"),
        ("q-0009", "ann2", "", "correct", "", "import", 1, "", None, "step 2"),
    ]
    assert ("q-0003", "ann1", "correct", "misread", "import", parse_datetime(_at(7)), None, 1) in after_second["labels"]
    assert after_again == after_second


def _labelled_run(make_run, pool, n):
    """A run of n answers, each labelled by ann1 (agreeing with ann2 on every third, adjudicated on every
    fifth after ann2 disagreed), final labels not yet worked out."""
    run_id = make_run(n)
    for i, answer in enumerate(Answer.objects.filter(run__run_id=run_id).order_by("qid")):
        label_write(answer=answer, annotator=pool["ann1"], verdict="correct", refresh_final=False)
        if i % 3 == 0:
            label_write(answer=answer, annotator=pool["ann2"], verdict="correct", refresh_final=False)
        elif i % 5 == 0:
            label_write(answer=answer, annotator=pool["ann2"], verdict="incorrect", refresh_final=False)
            Adjudication.objects.create(answer=answer, adjudicator=pool["adj"], verdict="incorrect")
    return run_id


def _finals(run_id):
    return list(Answer.objects.filter(run__run_id=run_id).order_by("qid").values_list("final_verdict", "final_source"))


@pytest.mark.django_db
def test_the_final_label_refresh_costs_the_same_statements_for_5_answers_as_for_60(
    make_run, pool, django_assert_max_num_queries
):
    for n in (5, 60):
        run_id = _labelled_run(make_run, pool, n)
        ids = list(Answer.objects.filter(run__run_id=run_id).values_list("pk", flat=True))
        with django_assert_max_num_queries(7):  # four reads, one update per outcome (three here)
            assert final_label_refresh(answer_ids=ids) == n
        assert _finals(run_id) == [
            ("correct", "agreement")
            if i % 3 == 0
            else ("incorrect", "adjudication")
            if i % 5 == 0
            else ("correct", "single")
            for i in range(n)
        ]
        with django_assert_max_num_queries(4):  # nothing to change: no write at all
            assert final_label_refresh(answer_ids=ids) == 0


@pytest.mark.django_db
def test_an_import_costs_the_same_statements_for_10_lines_as_for_120(
    make_run, pool, tmp_path, django_assert_max_num_queries
):
    """Checking, writing labels and history, and refreshing the final labels: none of it a statement per line
    or per answer."""
    for n in (10, 120):
        run_id = make_run(n)
        lines = [label(run_id, f"q-{i:04d}", "ann1", "correct", labelled_at=_at(1)) for i in range(n)]
        lines += [label(run_id, f"q-{i:04d}", "ann2", "incorrect" if i % 4 else "correct") for i in range(0, n, 2)]
        path = write_jsonl(tmp_path / f"l{n}.jsonl", lines)
        with django_assert_max_num_queries(18):
            result = labels_import(path=path)
        assert (result.created, result.changed, result.unchanged) == (len(lines), 0, 0)
        finals = dict(Answer.objects.filter(run__run_id=run_id).values_list("qid", "final_verdict"))
        assert finals == {f"q-{i:04d}": "correct" if i % 2 or i % 4 == 0 else "" for i in range(n)}


@pytest.mark.django_db
def test_a_queue_over_labelled_answers_costs_the_same_statements_for_6_items_as_for_60(
    make_run, pool, django_assert_max_num_queries
):
    """The labels an answer needs rise to the queue's overlap: a single label stops being final, agreeing
    pairs and adjudications stay; a fixed number of statements however many items."""
    for n in (6, 60):
        run_id = _labelled_run(make_run, pool, n)
        final_label_refresh(answer_ids=Answer.objects.filter(run__run_id=run_id).values_list("pk", flat=True))
        with django_assert_max_num_queries(18):
            queue = queue_create(name=f"June {n}", annotators=["ann3", "ann4"], overlap=2, run_id=run_id, seed=3)
        assert _finals(run_id) == [
            ("correct", "agreement") if i % 3 == 0 else ("incorrect", "adjudication") if i % 5 == 0 else ("", "")
            for i in range(n)
        ]
        assert sorted(QueueItem.objects.filter(queue=queue).values_list("position", flat=True)) == list(range(n))


@pytest.mark.django_db
def test_a_file_longer_than_a_write_batch_lands_whole(make_run, pool, tmp_path):
    """1,300 lines: more than one multi-row INSERT on SQLite, COPY on PostgreSQL (above COPY_MIN rows)."""
    from evalapp.bulk import COPY_MIN

    n = 650
    run_id = make_run(n)
    lines = [
        label(run_id, f"q-{i:04d}", "ann1", "correct", labelled_at=f"2020-06-01T10:{i % 60:02d}:00Z") for i in range(n)
    ]
    lines += [
        label(run_id, f"q-{i:04d}", "ann2", "incorrect" if i % 7 == 0 else "correct", rationale=f"r{i}")
        for i in range(n)
    ]
    assert len(lines) > COPY_MIN
    result = labels_import(path=write_jsonl(tmp_path / "big.jsonl", lines))
    assert (result.created, result.changed, result.unchanged) == (2 * n, 0, 0)
    got = {
        (qid, user): (verdict, rationale, at)
        for qid, user, verdict, rationale, at in HumanLabel.objects.filter(answer__run__run_id=run_id).values_list(
            "answer__qid", "annotator__username", "verdict", "rationale", "labelled_at"
        )
    }
    assert len(got) == 2 * n
    assert got[("q-0061", "ann1")] == ("correct", "", parse_datetime("2020-06-01T10:01:00Z"))
    assert got[("q-0063", "ann2")][:2] == ("incorrect", "r63")
    assert LabelEvent.objects.filter(answer__run__run_id=run_id, old_verdict="", source="import").count() == 2 * n
    assert set(LabelEvent.objects.filter(answer__run__run_id=run_id).values_list("at", flat=True)) == {
        got[("q-0063", "ann2")][2]  # the import's own time, on the line that gave none and on every event
    }
    finals = dict(Answer.objects.filter(run__run_id=run_id).values_list("qid", "final_verdict"))
    assert finals == {f"q-{i:04d}": "" if i % 7 == 0 else "correct" for i in range(n)}
