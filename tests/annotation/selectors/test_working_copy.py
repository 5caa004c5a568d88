"""The working copy a page at a time (annotation.selectors.working_copy) gives what the whole filtered queue
(tagging_list) and the whole working copy (working_records) give: every filter, both directions, pages of
every size, over pending edits that change, add and remove questions, with qids whose code point order is
not a locale's order; and its counts are the whole queue's."""

from collections import defaultdict

import pytest

from annotation.selectors import tagging as ts
from annotation.selectors.datasets import working_records
from annotation.selectors.working_copy import WorkingCopy, WorkingFilters
from tests.annotation.selectors.test_tagging_step import FILTERS, QIDS, world  # noqa: F401  (the fixture)


def working_filters(filters: dict) -> WorkingFilters:
    return WorkingFilters(
        stratum=filters.get("stratum", ""),
        status=filters.get("status", ""),
        labelled_by="eve" if filters.get("mine") else "",
        only=filters.get("only"),
    )


def walk(copy: WorkingCopy, size: int, *, forward: bool) -> list[dict]:
    out: list[dict] = []
    position = None
    while True:
        page = copy.page(position=position, forward=forward, size=size)
        out.extend(page)
        if len(page) < size:
            return out
        position = page[-1]["qid"]


@pytest.mark.parametrize("size", [1, 2, 5, 100])
def test_pages_in_either_direction_are_the_whole_filtered_queue(world, size):  # noqa: F811
    dataset, eve = world
    whole = {i["qid"]: i for i in working_records(dataset)}
    for filters in [*FILTERS, {"only": frozenset({"q-1", "q-20", "zz-new", "q.3", "nope"})}]:
        only = filters.get("only")
        queue = [
            i.qid
            for i in ts.filter_tagging_list(
                ts.tagging_list(dataset, user=eve, **{k: v for k, v in filters.items() if k != "only"}),
                user=eve,
                only=only,
            )
        ]
        copy = WorkingCopy(dataset, working_filters(filters))
        forward = walk(copy, size, forward=True)
        assert [i["qid"] for i in forward] == queue, filters
        assert forward == [whole[q] for q in queue]
        assert [i["qid"] for i in walk(copy, size, forward=False)] == queue[::-1], filters
        assert copy.count() == len(queue), filters


def test_the_counts_are_the_whole_queue_s(world):  # noqa: F811
    dataset, eve = world
    items = ts.tagging_list(dataset, user=eve)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        counts[item.stratum][0] += 1
        counts[item.stratum][1] += item.tagged
    copy = WorkingCopy(dataset)
    assert copy.strata_counts() == {s: tuple(c) for s, c in counts.items()}
    assert copy.flagged_count() == sum(1 for i in items if i.stale) == 2
    assert copy.count() == len(items) == len(QIDS) + 1


def test_a_page_from_a_qid_between_two_questions(world):  # noqa: F811
    dataset, _ = world
    copy = WorkingCopy(dataset)
    assert [i["qid"] for i in copy.page(position="q-13", forward=True, size=3)] == ["q-15", "q-2", "q-20"]
    assert [i["qid"] for i in copy.page(position="q-13", forward=False, size=2)] == ["q-12", "q-11"]
    assert copy.page(position="\uffff", forward=True, size=3) == []
