"""The working copy a page at a time: its questions in code point order of the qid, filtered, counted and
paged by keyset, so a page of a set of 20,000 questions costs what a page of a set of 1,000 does.

The latest version's questions that no pending edit touches are filtered, counted and paged by the
database (the gold decision read from the record's canonical JSON there); the pending edits, which grow
with the work done since publishing and not with the set, are read once and filtered in Python by the
same rules (annotation.selectors.tagging.gold_state). The API's working-copy list pages it with the
cursor pagination the other API lists use (evalapp.api.KeysetPagination), the tagging list page with
?after= and ?before=.
"""

import copy
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    Func,
    JSONField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from annotation.models import Dataset, DatasetVersion, VersionEntry, WorkingExample
from annotation.selectors.datasets import latest_version
from annotation.selectors.gold import stale_gold
from annotation.selectors.tagging import STATUSES, gold_state, stale_working
from annotation.selectors.tagging_step import qids_beyond
from evalapp.keyset import filter_in_values


@dataclass(frozen=True)
class WorkingFilters:
    """Which questions of the working copy to keep: by stratum, by status (`untagged`, `tagged` or
    `flagged`, as annotation.selectors.tagging.tagging_list reads them), labelled by one expert, or only
    the named qids (the re-tagging queue)."""

    stratum: str = ""
    status: str = ""
    labelled_by: str = ""
    only: frozenset[str] | None = None

    def __post_init__(self):
        if self.status and self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")


class _JSONTrue(Func):
    """Whether the JSON text `expression` holds JSON true at the top-level `key` (not 1, not "true"): the
    `record.get(key) is True` of gold_state, which Django's JSON lookups do not state on both databases."""

    output_field = BooleanField()

    def __init__(self, expression, key: str):
        super().__init__(expression)
        self.key = key

    def as_sql(self, compiler, connection, *args, **extra):  # PostgreSQL
        sql, params = compiler.compile(self.source_expressions[0])
        return f"((({sql})::jsonb -> %s) = 'true'::jsonb)", [*params, self.key]

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(JSON_TYPE({sql}, %s) = 'true')", [*params, f'$."{self.key}"']


def _with_record(rows: QuerySet, dataset: Dataset) -> QuerySet:
    """Version lines with the fields the filters read from their record's JSON, and `tagged`:
    gold_state(record) != "untagged" (ambiguous, a gold chunk, or the dataset's no-answer stratum)."""
    rows = rows.annotate(
        rec=Cast("example__canonical", JSONField()),
        # As text (not a JSON key transform, whose lookups compare JSON values), NULL for a JSON null.
        gold_chunk=Cast(KT("rec__gold_chunk_id"), TextField()),
        labelled_by=Cast(KT("rec__labelled_by"), TextField()),
        ambiguous=_JSONTrue("example__canonical", "ambiguous"),
    )
    decided = Q(ambiguous=True) | Q(gold_chunk__gt="") | Q(stratum=dataset.no_answer_stratum)
    return rows.annotate(
        tagged=Case(When(decided, then=Value(True)), default=Value(False), output_field=BooleanField())
    )


class WorkingCopy:
    """The working copy of a dataset under filters, as pages and counts (see the module's docstring).

    `page(position, forward, size)` gives the `size` questions just after (before) `position`, nearest
    first, each {"qid", "record", "revision", "edited"} as working_records gives them; it also answers the
    few queryset calls a cursor pagination makes (order_by, filter on the qid, a slice, count), so DRF's
    CursorPagination pages it as it pages a queryset.
    """

    def __init__(
        self,
        dataset: Dataset,
        filters: WorkingFilters | None = None,
        *,
        forward: bool = True,
        position: str | None = None,
    ):
        self.dataset = dataset
        self.filters = filters or WorkingFilters()
        self.forward = forward
        self.position = position
        # What has been read, shared with every copy (filtered, order_by, filter): one read a request.
        self._read: dict[str, Any] = {}

    def _once(self, key: str, read: Callable[[], Any]) -> Any:
        if key not in self._read:
            self._read[key] = read()
        return self._read[key]

    @property
    def latest(self) -> DatasetVersion | None:
        return self._once("latest", lambda: latest_version(self.dataset))

    @property
    def edits(self) -> dict[str, tuple[dict | None, int]]:
        """qid -> (record or None when removed, revision) of every pending edit."""

        def read():
            rows = WorkingExample.objects.filter(dataset=self.dataset, base_version=self.latest)
            return {q: (record, revision) for q, record, revision in rows.values_list("qid", "record", "revision")}

        return self._once("edits", read)

    @property
    def report(self) -> dict:
        """The latest version's stale-gold report, kept per corpus state (annotation.selectors.gold)."""
        return self._once("report", lambda: stale_gold(self.latest) if self.latest else {"stale": [], "moved": []})

    @property
    def flagged(self) -> frozenset[str]:
        """The flagged questions of the latest version (gold_text not in its live gold chunk): the stale
        and moved ones of its stale-gold report."""
        return frozenset(s["qid"] for s in self.report["stale"]) | frozenset(m["qid"] for m in self.report["moved"])

    def filtered(self, filters: WorkingFilters) -> "WorkingCopy":
        """The same working copy under other filters, keeping what this one has read."""
        other = copy.copy(self)
        other.filters = filters
        return other

    @property
    def flagged_edits(self) -> frozenset[str]:
        """The pending edits whose gold_text is not in their live gold chunk."""
        records = [r for r, _ in self.edits.values() if r is not None]
        return self._once("flagged_edits", lambda: frozenset(stale_working(self.dataset, records)))

    def version_rows(self, filters: WorkingFilters | None = None) -> QuerySet:
        """The latest version's lines no pending edit touches, that pass `filters`."""
        f = self.filters if filters is None else filters
        if self.latest is None:
            return VersionEntry.objects.none()
        pending = WorkingExample.objects.filter(dataset=self.dataset, base_version=self.latest, qid=OuterRef("qid"))
        rows = VersionEntry.objects.filter(version=self.latest).filter(~Exists(pending))
        if f.stratum:
            rows = rows.filter(stratum=f.stratum)
        if f.only is not None:
            rows = filter_in_values(rows, "qid", sorted(f.only))
        if f.status == "flagged":
            rows = filter_in_values(rows, "qid", sorted(self.flagged))
        if f.status in ("tagged", "untagged") or f.labelled_by:
            rows = _with_record(rows, self.dataset)
        if f.status in ("tagged", "untagged"):
            rows = rows.filter(**{"tagged": f.status == "tagged"})  # annotations of _with_record
        if f.labelled_by:
            rows = rows.filter(**{"labelled_by": f.labelled_by})
        return rows

    def edit_passes(self, qid: str, record: dict, filters: WorkingFilters | None = None) -> bool:
        """Whether a pending edit's record passes `filters` (the rules tagging_list applies)."""
        f = self.filters if filters is None else filters
        if f.only is not None and qid not in f.only:
            return False
        if f.stratum and str(record.get("stratum") or "") != f.stratum:
            return False
        state = gold_state(record, self.dataset.no_answer_stratum)
        if (f.status == "tagged" and state == "untagged") or (f.status == "untagged" and state != "untagged"):
            return False
        if f.status == "flagged" and qid not in self.flagged_edits:
            return False
        return not (f.labelled_by and str(record.get("labelled_by") or "") != f.labelled_by)

    def count(self) -> int:
        """How many questions pass the filters: from the version's kept groups (version_groups) unless the
        filters name qids (the re-tag queue, the flagged), which the database counts."""
        kept = sum(1 for q, (r, _) in self.edits.items() if r is not None and self.edit_passes(q, r))
        f = self.filters
        if f.only is not None or f.status == "flagged":
            return self.version_rows().count() + kept
        return sum(n for group, n in self._unedited_groups().items() if _group_passes(group, f)) + kept

    def version_groups(self) -> list[tuple[tuple[str, bool, str], int]]:
        """[((stratum, tagged, labelled_by), questions)] of the whole latest version, in one grouped statement
        that reads every line's record, kept in the cache under the version's content hash: a version never
        changes, so the statement runs once for it (and again after its dataset's no-answer stratum moved)."""
        if self.latest is None:
            return []
        key = f"working-groups:{self.latest.dataset_hash}:{self.dataset.no_answer_stratum}"
        kept = cache.get(key)
        if kept is None:
            kept = _grouped(VersionEntry.objects.filter(version=self.latest), self.dataset)
            cache.set(key, kept, None)
        return kept

    def _unedited_groups(self) -> dict[tuple[str, bool, str], int]:
        """The version's groups less the lines a pending edit stands in for (read in one statement, bounded
        by the pending edits)."""
        groups = dict(self.version_groups())
        if self.edits and self.latest is not None:
            edited = filter_in_values(VersionEntry.objects.filter(version=self.latest), "qid", sorted(self.edits))
            for group, n in self._once("edited_groups", lambda: _grouped(edited, self.dataset)):
                groups[group] -= n
        return groups

    def page(self, *, position: str | None, forward: bool, size: int, revisions: bool = True) -> list[dict]:
        """Up to `size` questions that pass the filters just after `position` (before it, going back; from
        the first or the last without one), nearest first: one statement for the version's lines, and one
        for the revisions of the questions edited in an earlier version's time (not read with `revisions`
        off: each unedited question's revision is then 0)."""
        got = []
        if size > 0 and self.latest is not None:
            rows = qids_beyond(self.version_rows(), position, forward=forward)
            if self.filters.only is None and self.filters.status != "flagged":
                # The page's lines are picked on the narrow manifest (and the records only a filter reads), and
                # only they are joined to their wide records: PostgreSQL sorts by qid under "C" with no index.
                # (Not with a qid set: filter_in_values names its column as the outer statement's.)
                rows = VersionEntry.objects.filter(pk__in=Subquery(rows.values("pk")[:size]))
            got = sorted(rows.values_list("qid", "example__canonical")[:size], reverse=not forward)
        bound = got[-1][0] if len(got) == size else None
        items = {qid: {"qid": qid, "record": json.loads(text), "revision": 0, "edited": False} for qid, text in got}
        for qid, (record, revision) in self.edits.items():
            if record is None or not _between(qid, position, bound, forward=forward):
                continue
            if self.edit_passes(qid, record):
                items[qid] = {"qid": qid, "record": record, "revision": revision, "edited": True}
        page = [items[q] for q in sorted(items, reverse=not forward)[:size]]
        older = [i["qid"] for i in page if not i["edited"]]
        if older and revisions:
            # A question edited on top of an earlier version keeps counting its revisions (working_records).
            counted = dict(
                WorkingExample.objects.filter(dataset=self.dataset, qid__in=older).values_list("qid", "revision")
            )
            for item in page:
                item["revision"] = counted.get(item["qid"], item["revision"])
        return page

    def strata_counts(self) -> dict[str, tuple[int, int]]:
        """stratum -> (questions, questions with a gold decision) over the whole working copy, unfiltered:
        the version's kept groups, the pending edits counted in Python."""
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for (stratum, tagged, _), n in self._unedited_groups().items():
            counts[stratum][0] += n
            counts[stratum][1] += n if tagged else 0
        for record, _ in self.edits.values():
            if record is not None:
                stratum = str(record.get("stratum") or "")
                counts[stratum][0] += 1
                counts[stratum][1] += gold_state(record, self.dataset.no_answer_stratum) != "untagged"
        return {s: (n, t) for s, (n, t) in counts.items() if n}

    def flagged_count(self) -> int:
        """How many questions of the whole working copy are flagged (stale gold)."""
        return len(self.flagged - set(self.edits)) + len(self.flagged_edits)

    # What DRF's CursorPagination calls on the "queryset" it pages (ordering "qid", unique in the working
    # copy). Each returns a copy that keeps what this one has read (the latest version, the pending edits).
    def order_by(self, *fields: str) -> "WorkingCopy":
        moved = copy.copy(self)
        moved.forward = not fields[0].startswith("-")
        return moved

    def filter(self, **kwargs: str) -> "WorkingCopy":
        ((lookup, position),) = kwargs.items()
        if lookup not in ("qid__gt", "qid__lt") or (lookup == "qid__gt") != self.forward:
            raise ValueError(f"the working copy pages by qid in the cursor's own direction, not by {lookup}")
        moved = copy.copy(self)
        moved.position = position
        return moved

    def __getitem__(self, window: slice) -> list[dict]:
        start, stop = window.start or 0, window.stop
        return self.page(position=self.position, forward=self.forward, size=stop)[start:stop]


def _grouped(rows: QuerySet, dataset: Dataset) -> list[tuple[tuple[str, bool, str], int]]:
    """[((stratum, tagged, labelled_by), questions)] of version lines, one grouped statement."""
    grouped = (
        _with_record(rows, dataset).order_by().values_list("stratum", "tagged", "labelled_by").annotate(n=Count("id"))
    )
    sums: dict[tuple[str, bool, str], int] = defaultdict(int)
    for stratum, tagged, labelled_by, n in grouped:  # NULL and "" are one "labelled by nobody"
        sums[(stratum, bool(tagged), labelled_by or "")] += n
    return list(sums.items())


def _group_passes(group: tuple[str, bool, str], f: WorkingFilters) -> bool:
    stratum, tagged, labelled_by = group
    return (
        (not f.stratum or stratum == f.stratum)
        and (f.status != "tagged" or tagged)
        and (f.status != "untagged" or not tagged)
        and (not f.labelled_by or labelled_by == f.labelled_by)
    )


def _between(qid: str, position: str | None, bound: str | None, *, forward: bool) -> bool:
    """Whether `qid` is beyond `position` (in the direction of travel) and not beyond `bound`."""
    if forward:
        return (position is None or qid > position) and (bound is None or qid <= bound)
    return (position is None or qid < position) and (bound is None or qid >= bound)
