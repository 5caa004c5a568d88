"""Time per label: per person and for the team, median / p90 / total active seconds per item, what is left
out, and the projection for what is left (tests/annotation/timing_world.py holds the figures' sources)."""

from typing import cast

import pytest

from annotation.models import Dataset, QueueItem
from annotation.selectors.label_time import queue_label_time, tagging_time
from evalapp.errors import ServiceError
from tests.annotation.timing_world import queue_world, tagging_world

pytestmark = pytest.mark.django_db

SCRIPT_SAVES = "saves sent without active seconds, as scripts send them, count 0 s"
IMPORTED = "labels imported or sent without active seconds carry no figure"


def figures(items, timed, untimed, zero, short, median, p90, total, ahead, words):
    return {
        "items": items,
        "timed": timed,
        "untimed": untimed,
        "zero_seconds": zero,
        "short": short,
        "median_seconds": median,
        "p90_seconds": p90,
        "total_seconds": total,
        "projection_seconds": ahead,
        "projection": words,
    }


def test_tagging_time_per_expert_and_team():
    report = tagging_time(tagging_world())
    assert report == {
        "kind": "tagging",
        "dataset": "timeset",
        "unit": "question",
        "left": 6,
        "min_seconds": 0.0,
        # pooled 30 40 50 60 90 100 600 (two zero-second questions out): median 60, p90 100 + 0.4 * 500
        "team": figures(9, 7, 0, 2, 0, 60.0, 300.0, 970.0, 360.0, "6 min"),
        "people": [
            {
                "username": "eve",
                # 30 (10 + 20 over two saves) 40 50 100, an even count: median (40 + 50) / 2
                **figures(5, 4, 0, 1, 0, 45.0, 85.0, 220.0, 270.0, "5 min"),
                "note": "1 of 5 left out: 1 question at 0 s",
                "sentence": "The 6 untagged questions need about 5 min at eve's median (45 s a question).",
            },
            {
                "username": "kim",
                **figures(3, 3, 0, 0, 0, 90.0, 498.0, 750.0, 540.0, "9 min"),
                "note": "",
                "sentence": "The 6 untagged questions need about 9 min at kim's median (90 s a question).",
            },
            {
                "username": "ola",
                **figures(1, 0, 0, 1, 0, None, None, 0.0, None, None),
                "note": f"no timing: 1 question, none with active seconds; {SCRIPT_SAVES}",
                "sentence": "",
            },
        ],
        "sentence": "The 6 untagged questions need about 6 min at the team's median (60 s a question).",
        "excluded": "Left out of the figures: 2 questions at 0 s.",
    }


def test_tagging_time_min_seconds_leaves_out_the_short_ones_and_says_so():
    report = tagging_time(tagging_world(), min_seconds=45)
    eve = report["people"][0]
    assert (eve["timed"], eve["short"], eve["median_seconds"], eve["note"]) == (
        2,
        2,
        75.0,
        "3 of 5 left out: 1 question at 0 s, 2 questions under 45 s",
    )
    assert report["excluded"] == "Left out of the figures: 2 questions at 0 s, 2 questions under 45 s."
    assert report["min_seconds"] == 45.0


def test_tagging_time_with_no_timing_at_all_says_so_and_projects_nothing():
    from tests.factories import DatasetFactory, EditAuditFactory, UserFactory, record, version

    dataset = cast("Dataset", DatasetFactory(name="untimed"))
    version(dataset, [record("u-1"), record("u-2")])
    EditAuditFactory(dataset=dataset, qid="u-1", user=UserFactory(username="bot", roles=("expert",)))
    report = tagging_time(dataset)
    assert report["team"] == figures(1, 0, 0, 1, 0, None, None, 0.0, None, None)
    assert report["sentence"] == f"No timing yet, so no projection for the 2 untagged questions: {SCRIPT_SAVES}."
    assert report["excluded"] == "Left out of the figures: 1 question at 0 s."


def test_tagging_time_of_an_empty_dataset():
    from tests.factories import DatasetFactory

    report = tagging_time(cast("Dataset", DatasetFactory(name="empty")))
    assert (report["left"], report["people"], report["team"]["items"], report["team"]["projection"]) == (
        0,
        [],
        0,
        "0 s",
    )
    assert report["sentence"] == "Every question of the working copy is tagged: nothing is left."
    assert report["excluded"] == ""


def test_queue_label_time_per_annotator_and_team():
    queue = queue_world()
    assert queue_label_time(queue) == {
        "kind": "labelling",
        "queue": queue.pk,
        "name": "timed round",
        "unit": "label",
        "left": 5,  # item 4 needs one more, items 5 and 6 two each
        "min_seconds": 0.0,
        # pooled 12 18 20 30 40: median 20, p90 30 + 0.6 * 10
        "team": figures(7, 5, 1, 1, 0, 20.0, 36.0, 120.0, 100.0, "2 min"),
        "people": [
            {
                "username": "ann1",
                **figures(4, 3, 0, 1, 0, 18.0, 27.6, 60.0, 90.0, "2 min"),
                "note": "1 of 4 left out: 1 label at 0 s",
                "sentence": "The 5 labels left need about 2 min at ann1's median (18 s a label).",
            },
            {
                "username": "ann2",
                # an even count: (20 + 40) / 2; 5 x 30 = 150 s is 3 min (half up)
                **figures(2, 2, 0, 0, 0, 30.0, 38.0, 60.0, 150.0, "3 min"),
                "note": "",
                "sentence": "The 5 labels left need about 3 min at ann2's median (30 s a label).",
            },
            {
                "username": "ann3",
                **figures(0, 0, 0, 0, 0, None, None, 0.0, None, None),
                "note": "no labels yet",
                "sentence": "",
            },
            {
                "username": "ann4",
                **figures(1, 0, 1, 0, 0, None, None, 0.0, None, None),
                "note": f"no timing: 1 label, none with active seconds; {IMPORTED}",
                "sentence": "",
            },
        ],
        "sentence": "The 5 labels left need about 2 min at the team's median (20 s a label).",
        "excluded": "Left out of the figures: 1 label at 0 s, 1 label with no figure.",
    }


def test_queue_label_time_carries_timing_only():
    text = repr(queue_label_time(queue_world()))
    assert "SECRET-RATIONALE" not in text
    assert "correct" not in text and "verdict" not in text


def test_queue_label_time_when_every_item_is_in():
    queue = queue_world()
    QueueItem.objects.filter(queue=queue).update(status=QueueItem.AGREED, done=2)
    report = queue_label_time(queue)
    assert (report["left"], report["team"]["projection_seconds"], report["team"]["projection"]) == (0, 0.0, "0 s")
    assert report["sentence"] == "Every item has all its labels: nothing is left."
    assert [p["sentence"] for p in report["people"]] == ["", "", "", ""]


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), 86_401.0])
def test_min_seconds_out_of_range_is_refused_with_a_sentence(bad):
    queue = queue_world()
    with pytest.raises(ServiceError) as caught:
        queue_label_time(queue, min_seconds=bad)
    assert str(caught.value).startswith("the time report's parameters are not valid\n  field 'min_seconds': must be")
