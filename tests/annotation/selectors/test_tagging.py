"""Server-side reads behind the tagging pages: queue and filters, progress against the budget, stale gold,
the publish preview, and expert speed from the audit."""

import pytest
from django.contrib.auth import get_user_model

from annotation.models import EditAudit
from annotation.selectors import tagging as ts
from annotation.selectors import tagging_step
from annotation.services.corpus import corpus_import
from annotation.services.datasets import dataset_publish, strata_set
from annotation.services.users import user_upsert
from annotation.services.working import working_edit
from tests.annotation.conftest import CORPUS, TRIAL, write


@pytest.fixture
def expert(db):
    user_upsert(username="eve", roles=["expert"], password="pw-eve-12345")
    return get_user_model().objects.get(username="eve")


def test_queue_states_and_filters(ds, expert):
    items = ts.tagging_list(ds)
    assert [(i.qid, i.state, i.stratum, i.stale) for i in items] == [
        ("q-1", "gold", "policy", ""),
        ("q-2", "untagged", "policy", ""),
        ("q-3", "no_answer", "no_answer", ""),
        ("q-4", "untagged", "comparison", ""),
    ]
    assert [i.qid for i in ts.tagging_list(ds, status="untagged")] == ["q-2", "q-4"]
    assert [i.qid for i in ts.tagging_list(ds, status="tagged")] == ["q-1", "q-3"]
    assert [i.qid for i in ts.tagging_list(ds, stratum="policy")] == ["q-1", "q-2"]
    assert ts.tagging_list(ds, user=expert, mine=True) == []
    working_edit(
        dataset_name="support",
        qid="q-2",
        changes={
            "gold_chunk_id": "kb:SEC#0000",
            "gold_doc_id": "kb:SEC",
            "gold_text": "Passwords rotate every ninety days.",
            "labelled_by": "eve",
        },
        base_revision=0,
        user=expert,
    )
    mine = ts.tagging_list(ds, user=expert, mine=True)
    assert [(i.qid, i.state, i.edited, i.revision) for i in mine] == [("q-2", "gold", True, 1)]
    assert [i.qid for i in ts.tagging_list(ds, status="untagged")] == ["q-4"]


def test_ambiguous_counts_as_tagged(ds, expert):
    working_edit(dataset_name="support", qid="q-4", changes={"ambiguous": True}, base_revision=0, user=expert)
    assert [(i.qid, i.state) for i in ts.tagging_list(ds, status="tagged")] == [
        ("q-1", "gold"),
        ("q-3", "no_answer"),
        ("q-4", "ambiguous"),
    ]


def test_progress_against_budget(ds, expert):
    strata_set(dataset_name="support", shares={"policy": "50", "comparison": "25", "no_answer": "25"})
    ds.refresh_from_db()
    rows = ts.strata_progress(ds, ts.item_counts(ts.tagging_list(ds)))
    # 4 questions: targets are share x 4
    assert [(r.stratum, r.tagged, r.target, r.questions, r.share, r.percent) for r in rows] == [
        ("comparison", 0, 1, 1, 25.0, 0),
        ("no_answer", 1, 1, 1, 25.0, 100),
        ("policy", 1, 2, 2, 50.0, 50),
    ]


def test_progress_without_budget_uses_the_strata_found(ds):
    rows = ts.strata_progress(ds, ts.item_counts(ts.tagging_list(ds)))
    assert [(r.stratum, r.tagged, r.target, r.share) for r in rows] == [
        ("comparison", 0, 1, None),
        ("no_answer", 1, 1, None),
        ("policy", 1, 2, None),
    ]


def test_stale_gold_flagged_with_the_chunk_that_now_holds_it(ds, tmp_path):
    changed = dict(CORPUS[0], text="New intro paragraph.\n\n" + CORPUS[0]["text"])
    corpus_import(path=write(tmp_path / "c2.jsonl", [changed]))
    flagged = ts.tagging_list(ds, status="flagged")
    # the re-import shifted the paragraphs: #0001 is live again but holds other text; #0002 holds the gold now
    assert [(i.qid, i.stale, i.now_in) for i in flagged] == [
        ("q-1", "gold_text no longer in the chunk", "kb:PRICE#0002")
    ]


def test_stale_gold_not_anywhere(ds, tmp_path):
    corpus_import(path=write(tmp_path / "c2.jsonl", [dict(CORPUS[0], text="Trials are gone.\n\nSecond paragraph.")]))
    flagged = ts.tagging_list(ds, status="flagged")
    assert [(i.qid, i.stale, i.now_in) for i in flagged] == [("q-1", "gold_text no longer in the chunk", "")]


def test_stale_gold_chunk_retired(ds, tmp_path):
    corpus_import(path=write(tmp_path / "c2.jsonl", [dict(CORPUS[0], text="Only one paragraph now.")]))
    flagged = ts.tagging_list(ds, status="flagged")
    assert [(i.qid, i.stale, i.now_in) for i in flagged] == [("q-1", "gold chunk retired", "")]


def test_working_item_matches_working_records(ds, expert):
    from annotation.selectors.datasets import working_records

    working_edit(dataset_name="support", qid="q-2", changes={"expected": "90 days"}, base_revision=0, user=expert)
    entries = list(working_records(ds))
    assert [(e["qid"], e["edited"], e["record"].get("expected")) for e in entries] == [
        ("q-1", False, None),
        ("q-2", True, "90 days"),
        ("q-3", False, None),
        ("q-4", False, None),
    ]
    for entry in entries:
        assert ts.working_item(ds, entry["qid"]) == entry
    assert ts.working_item(ds, "nope") is None
    working_edit(dataset_name="support", qid="q-4", changes={}, base_revision=0, user=expert, delete=True)
    assert ts.working_item(ds, "q-4") is None


def test_neighbour_qid_follows_the_filtered_queue(ds):
    assert tagging_step.neighbour_qid(ds, "q-1") == "q-2"
    assert tagging_step.neighbour_qid(ds, "q-2", status="untagged") == "q-4"
    assert tagging_step.neighbour_qid(ds, "q-4") is None
    assert tagging_step.neighbour_qid(ds, "q-4", step=-1) == "q-3"
    assert tagging_step.neighbour_qid(ds, "q-1", step=-1) is None


def test_working_diff_previews_what_publish_does(ds, expert):
    empty = ts.working_diff(ds)
    assert (empty["added"], empty["removed"], empty["modified"], empty["unchanged"], empty["changed"]) == (
        [],
        [],
        [],
        4,
        False,
    )
    assert empty["working_hash"] == empty["base_hash"]
    working_edit(
        dataset_name="support",
        qid="q-2",
        changes={"expected": "90 days", "grading": "extraction"},
        base_revision=0,
        user=expert,
    )
    working_edit(
        dataset_name="support",
        qid="q-9",
        changes={"question": "new one", "stratum": "policy"},
        base_revision=0,
        user=expert,
    )
    working_edit(dataset_name="support", qid="q-4", changes={}, base_revision=0, user=expert, delete=True)
    diff = ts.working_diff(ds)
    assert [a["qid"] for a in diff["added"]] == ["q-9"]
    assert diff["added"][0]["record"] == {"qid": "q-9", "question": "new one", "stratum": "policy"}
    assert diff["removed"] == ["q-4"]
    assert diff["modified"] == [
        {
            "qid": "q-2",
            "changes": [
                {"field": "expected", "old": None, "new": "90 days"},
                {"field": "grading", "old": None, "new": "extraction"},
            ],
        }
    ]
    assert diff["unchanged"] == 2
    result = dataset_publish(dataset_name="support", user=expert)
    assert (result.added, result.removed, result.modified, result.unchanged) == (1, 1, 1, 2)
    assert result.dataset_hash == diff["working_hash"]
    assert ts.working_diff(ds)["changed"] is False


def test_expert_stats_counts_each_save_once(ds, expert):
    user_upsert(username="ola", roles=["expert"], password="pw-ola-12345")
    ola = get_user_model().objects.get(username="ola")
    # eve: q-2 in two saves (10 s + 20 s, the first touching 3 fields), q-4 in one (40 s)
    working_edit(
        dataset_name="support",
        qid="q-2",
        changes={
            "gold_chunk_id": "kb:SEC#0000",
            "gold_doc_id": "kb:SEC",
            "gold_text": "Passwords rotate every ninety days.",
        },
        base_revision=0,
        user=expert,
        active_seconds=10,
    )
    working_edit(
        dataset_name="support",
        qid="q-2",
        changes={"expected": "90 days"},
        base_revision=1,
        user=expert,
        active_seconds=20,
    )
    working_edit(
        dataset_name="support", qid="q-4", changes={"ambiguous": True}, base_revision=0, user=expert, active_seconds=40
    )
    # ola: a question edit that is not tagging work (only the wording) does not count as a tagged question
    working_edit(
        dataset_name="support",
        qid="q-3",
        changes={"question": "refunds on mars?"},
        base_revision=0,
        user=ola,
        active_seconds=5,
    )
    # 5 fields eve changed, and the tagger and day the new gold passage of q-2 records
    assert EditAudit.objects.filter(user=expert).count() == 7
    rows = ts.expert_stats(ds)
    assert [(r.expert, r.stratum, r.questions, r.active_seconds, r.median_seconds, r.per_hour) for r in rows] == [
        ("eve", "", 2, 70.0, 35.0, 102.9),
        ("eve", "comparison", 1, 40.0, 40.0, 90.0),
        ("eve", "policy", 1, 30.0, 30.0, 120.0),
    ]


def test_expert_stats_median_leaves_out_zero_second_questions(ds, expert):
    # a script's save carries 0 s: the question counts, its time does not pull the median down
    working_edit(dataset_name="support", qid="q-2", changes={"ambiguous": True}, base_revision=0, user=expert)
    working_edit(
        dataset_name="support", qid="q-4", changes={"ambiguous": True}, base_revision=0, user=expert, active_seconds=40
    )
    rows = ts.expert_stats(ds)
    assert [(r.expert, r.stratum, r.questions, r.active_seconds, r.median_seconds) for r in rows] == [
        ("eve", "", 2, 40.0, 40.0),
        ("eve", "comparison", 1, 40.0, 40.0),
        ("eve", "policy", 1, 0.0, None),
    ]


def test_a_re_tag_names_the_new_tagger_and_day_whoever_sends_it(ds, expert):
    """q-1 was tagged by "ann"; an expert moving its gold passage through the API (no labelled_by sent)
    becomes its tagger, today. An edit that leaves the gold alone keeps the tagger."""
    from datetime import UTC, datetime

    from annotation.selectors.tagging import working_item

    today = datetime.now(UTC).date().isoformat()
    working_edit(dataset_name="support", qid="q-1", changes={"expected": "thirty days"}, base_revision=0, user=expert)
    kept = working_item(ds, "q-1")["record"]
    assert (kept["labelled_by"], kept.get("labelled_at")) == ("ann", None)

    working_edit(
        dataset_name="support",
        qid="q-1",
        changes={"gold_chunk_id": "kb:PRICE#0002", "gold_text": "Legacy Team plans bill monthly."},
        base_revision=1,
        user=expert,
    )
    record = working_item(ds, "q-1")["record"]
    assert (record["gold_chunk_id"], record["labelled_by"], record["labelled_at"]) == (
        "kb:PRICE#0002",
        expert.username,
        today,
    )

    working_edit(
        dataset_name="support",
        qid="q-1",
        changes={"gold_text": TRIAL, "gold_chunk_id": "kb:PRICE#0001", "labelled_by": "r.iyer"},
        base_revision=2,
        user=expert,
    )
    assert working_item(ds, "q-1")["record"]["labelled_by"] == "r.iyer"  # a tagger named explicitly is kept
