"""Searching the live corpus (htmx asks for the results fragment only)."""

from django.shortcuts import render

from annotation import search
from evalapp.roles import ENGINEER, EXPERT, role_required


@role_required(EXPERT, ENGINEER)
def corpus_search(request):
    """Search the live corpus; htmx asks for the results fragment only."""
    q = request.GET.get("q", "")
    hits = search.search_chunks(q, limit=25, doc_id=request.GET.get("doc_id", ""), source=request.GET.get("source", ""))
    template = "annotation/_hits.html" if request.headers.get("HX-Request") else "annotation/corpus_search.html"
    return render(request, template, {"q": q, "hits": hits})
