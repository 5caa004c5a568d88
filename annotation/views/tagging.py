"""Expert pages for gold-passage tagging. Thin: parse, call a selector or a service, render.

Saving goes through the REST endpoint the scripts use (PATCH /api/datasets/{name}/working/{qid}/,
optimistic concurrency and idempotent client keys), driven by the modules in static/js/tagging/; these views
only render pages and htmx fragments, and publish.
"""

import datetime
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe

from annotation import search
from annotation.forms import QueuePositionForm
from annotation.models import Dataset, Document
from annotation.selectors import tagging as tagging_selectors
from annotation.selectors.corpus import chunk_with_neighbours
from annotation.selectors.datasets import dataset_get, latest_version
from annotation.selectors.label_time import tagging_time
from annotation.selectors.stale_history import retag_qids
from annotation.selectors.tagging_step import neighbour_qid
from annotation.selectors.working_copy import WorkingCopy, WorkingFilters
from annotation.services.datasets import GRADINGS, dataset_publish
from evalapp.errors import ServiceError
from evalapp.roles import ENGINEER, EXPERT, role_required

TAGGERS = (EXPERT, ENGINEER)
PAGE = 100


def _filters(request) -> dict:
    """The queue filters from the query string, normalised (unknown status values are ignored)."""
    status = request.GET.get("status", "")
    return {
        "stratum": request.GET.get("stratum", ""),
        "status": status if status in tagging_selectors.STATUSES else "",
        "mine": request.GET.get("mine") == "1",
        "stale": request.GET.get("stale") == "1",
    }


def _filter_query(filters: dict) -> str:
    params = {k: v for k, v in (("stratum", filters["stratum"]), ("status", filters["status"])) if v}
    for flag in ("mine", "stale"):
        if filters[flag]:
            params[flag] = "1"
    return urlencode(params)


@role_required(*TAGGERS)
def workspace_home(request):
    """Pick a dataset to tag."""
    datasets = list(Dataset.objects.all())
    if len(datasets) == 1 and not request.GET.get("all"):
        return redirect("tagging-list", name=datasets[0].name)
    return render(request, "annotation/tagging/home.html", {"datasets": datasets})


def _queue_page(shown: WorkingCopy, position: dict) -> tuple[list[dict], str | None, str | None]:
    """One page of the filtered queue by keyset on the qid: its items, and the qid the next page starts
    after and the previous one ends before (None at either end). Back past the first page is the first
    page, so it is always full."""
    if position["before"]:
        back = shown.page(position=position["before"], forward=False, size=PAGE + 1)
        if len(back) > PAGE:
            items = back[:PAGE][::-1]
            return items, items[-1]["qid"], items[0]["qid"]
        position = {"after": ""}
    after = position["after"] or None
    ahead = shown.page(position=after, forward=True, size=PAGE + 1)
    items = ahead[:PAGE]
    later = items[-1]["qid"] if len(ahead) > PAGE else None
    return items, later, items[0]["qid"] if after is not None and items else None


@role_required(*TAGGERS)
def tagging_list_page(request, name):
    """The dataset's questions needing gold, filtered, a page at a time (keyset on the qid: ?after=, ?before=),
    with progress per stratum against the budget. What it reads does not grow with the set: one grouped
    count over the version's lines, the pending edits, and the page (annotation.selectors.working_copy)."""
    dataset = dataset_get(name)
    filters = _filters(request)
    everything = WorkingCopy(dataset)
    retag = retag_qids(dataset, version=everything.latest, report=everything.report) if everything.latest else []
    shown = everything.filtered(
        WorkingFilters(
            stratum=filters["stratum"],
            status=filters["status"],
            labelled_by=request.user.username if filters["mine"] else "",
            only=frozenset(retag) if filters["stale"] else None,
        )
    )
    position = QueuePositionForm(request.GET).parsed("the page position is not valid")
    page, after, before = _queue_page(shown, position)
    counts = everything.strata_counts()
    total = sum(n for n, _ in counts.values())
    filtered = any(filters.values())
    first_untagged = everything.filtered(WorkingFilters(status="untagged")).page(
        position=None, forward=True, size=1, revisions=False
    )
    query = _filter_query(filters)
    return render(
        request,
        "annotation/tagging/list.html",
        {
            "dataset": dataset,
            "items": tagging_selectors.tagging_items(dataset, page),
            "count": shown.count() if filtered else total,
            "total": total,
            "tagged": sum(t for _, t in counts.values()),
            "flagged": everything.flagged_count(),
            "progress": tagging_selectors.strata_progress(dataset, counts),
            "filters": filters,
            "query": query,
            "strata": sorted(set(counts) | set(dataset.strata_budget or {})),
            "statuses": tagging_selectors.STATUSES,
            "next_page": f"?{query + '&' if query else ''}{urlencode({'after': after})}" if after else None,
            "previous_page": f"?{query + '&' if query else ''}{urlencode({'before': before})}" if before else None,
            "first_page": f"?{query}" if before else None,
            "page_size": PAGE,
            "pending": len(everything.edits),
            "retag_count": len(retag),
            "first_untagged": first_untagged[0]["qid"] if first_untagged else None,
        },
    )


@role_required(*TAGGERS)
def question(request, name, qid):
    """Tag one question: search the corpus, open a chunk with its neighbours, tag, narrow, save."""
    dataset = dataset_get(name)
    item = tagging_selectors.working_item(dataset, qid)
    if item is None:
        raise Http404(f"unknown question {qid!r} in dataset {name!r}")
    filters = _filters(request)
    record = item["record"]
    latest = latest_version(dataset)
    strata = sorted(
        set(dataset.strata_budget or {})
        | {str(record.get("stratum") or "")}
        | ({dataset.no_answer_stratum})
        | (
            set(latest.entries.values_list("stratum", flat=True).distinct())
            if latest and not dataset.strata_budget
            else set()
        )
    )
    stale = tagging_selectors.stale_working(dataset, [record]).get(qid) if record.get("gold_chunk_id") else None
    retag = request.GET.get("retag") == "1" or stale is not None
    initial_q = ""
    if retag and isinstance(record.get("gold_text"), str):
        initial_q = " ".join(search.query_words(record["gold_text"])[:6])
    open_chunk = (stale[1] if stale and stale[1] else "") or (record.get("gold_chunk_id") or "")
    return render(
        request,
        "annotation/tagging/question.html",
        {
            "dataset": dataset,
            "item": item,
            "record": record,
            "qid": qid,
            "filters": filters,
            "query": _filter_query(filters),
            "gradings": GRADINGS,
            "strata": [s for s in strata if s],
            "sources": list(
                Document.objects.exclude(source="").values_list("source", flat=True).distinct().order_by("source")[:50]
            ),
            "stale": stale,
            "initial_q": initial_q,
            "open_chunk": open_chunk,
            "page_state": {
                "dataset": dataset.name,
                "qid": qid,
                "revision": item["revision"],
                "record": record,
                "username": request.user.username,
                "today": datetime.datetime.now(datetime.UTC).date().isoformat(),
                "no_answer_stratum": dataset.no_answer_stratum,
                "ambiguous_stratum": "ambiguous" if "ambiguous" in strata else "",
                "api": reverse("api-working-item", args=[dataset.name, qid]),
                "chunk_url": reverse("tagging-chunk", args=[dataset.name]),
                "next_url": reverse("tagging-next", args=[dataset.name, qid])
                + ("?" + _filter_query(filters) if _filter_query(filters) else ""),
                "queue_url": reverse("tagging-list", args=[dataset.name])
                + ("?" + _filter_query(filters) if _filter_query(filters) else ""),
            },
        },
    )


@role_required(*TAGGERS)
def step(request, name, qid):
    """Go to the next (or, with ?step=-1, previous) question of the filtered queue; the queue at its end."""
    dataset = dataset_get(name)
    filters = _filters(request)
    direction = -1 if request.GET.get("step") == "-1" else 1
    target = neighbour_qid(dataset, qid, user=request.user, step=direction, **filters)
    query = _filter_query(filters)
    if target is None:
        messages.info(
            request, "That was the last question of this queue." if direction > 0 else "That was the first question."
        )
        return redirect(reverse("tagging-list", args=[name]) + ("?" + query if query else ""))
    return redirect(reverse("tagging-question", args=[name, target]) + ("?" + query if query else ""))


@role_required(*TAGGERS)
def search_fragment(request, name):
    """htmx: ranked live chunks for the words typed so far, matches highlighted."""
    q = request.GET.get("q", "")
    hits = search.search_chunks(
        q, limit=20, doc_id=request.GET.get("doc_id", "").strip(), source=request.GET.get("source", "").strip()
    )
    return render(request, "annotation/tagging/_hits.html", {"q": q, "hits": hits, "dataset_name": name})


@role_required(*TAGGERS)
def chunk_fragment(request, name):
    """htmx: one chunk with its neighbours, ready to be tagged (its raw text is what gets tagged)."""
    chunk_id = request.GET.get("chunk_id", "")
    found = chunk_with_neighbours(chunk_id)
    if found is None:
        return render(request, "annotation/tagging/_chunk.html", {"missing": chunk_id}, status=404)
    chunk, neighbours = found
    q = request.GET.get("q", "")
    return render(
        request,
        "annotation/tagging/_chunk.html",
        {
            "chunk": chunk,
            "document": chunk.document,
            "chunk_html": mark_safe(search.highlight_html(chunk.text, q)),  # noqa: S308  escaped there
            "before": [n for n in neighbours if n.ordinal < chunk.ordinal],
            "after": [n for n in neighbours if n.ordinal > chunk.ordinal],
            "q": q,
            "dataset_name": name,
        },
    )


@role_required(*TAGGERS)
def publish(request, name):
    """GET: what publishing would change (added / removed / modified). POST: publish exactly that.

    The confirmation carries the working copy's digest as it was shown; if someone saved in between,
    the diff is shown again instead of publishing something nobody reviewed.
    """
    dataset = dataset_get(name)
    diff = tagging_selectors.working_diff(dataset)
    error = None
    if request.method == "POST":
        if request.POST.get("working_hash", "") != (diff["working_hash"] or ""):
            error = "The working copy changed while you were reviewing it. Review the changes below again."
        elif not diff["changed"]:
            error = "Nothing to publish: the working copy equals the latest version."
        else:
            try:
                result = dataset_publish(dataset_name=name, user=request.user, note=request.POST.get("note", "")[:500])
            except ServiceError as exc:
                error = str(exc)
            else:
                messages.success(
                    request,
                    f"Published {name} v{result.number} ({result.dataset_hash}): "
                    f"{result.added} added, {result.removed} removed, {result.modified} modified.",
                )
                return redirect("tagging-list", name=name)
    return render(
        request,
        "annotation/tagging/publish.html",
        {"dataset": dataset, "diff": diff, "error": error},
        status=409 if error and request.method == "POST" else 200,
    )


@role_required(*TAGGERS)
def stats(request, name):
    """Tagging speed per expert: questions per active hour and median seconds a question, per stratum, and
    how long the untagged questions would take at each expert's median and the team's."""
    dataset = dataset_get(name)
    rows = tagging_selectors.expert_stats(dataset)
    return render(
        request,
        "annotation/tagging/stats.html",
        {
            "dataset": dataset,
            "overall": [r for r in rows if not r.stratum],
            "by_stratum": [r for r in rows if r.stratum],
            "time": tagging_time(dataset),
        },
    )
