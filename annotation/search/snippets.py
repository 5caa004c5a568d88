"""Snippets and highlighting: the matched words wrapped in <mark>, the text escaped around them."""

import re

from django.utils.html import escape

from annotation.search.scoring import WORD, query_words, term, word_matches

# The placeholders some callers wrap matches in; snippet_html escapes the text between them and only then
# puts the marks in, so a mark can never land inside an entity the escaping made.
_OPEN, _CLOSE = "\ue000", "\ue001"
_PLACEHOLDERS = re.compile(f"([{_OPEN}{_CLOSE}])")
SNIPPET_WORDS = 40
_LEAD = 6  # words shown before the first match


def snippet_html(marked: str) -> str:
    """HTML of a text whose matches are wrapped in placeholders: the text escaped piece by piece, <mark>
    around each match, always balanced (a stray placeholder in the text is dropped)."""
    out, open_ = [], False
    for piece in _PLACEHOLDERS.split(marked or ""):
        if piece == _OPEN:
            if not open_:
                out.append("<mark>")
                open_ = True
        elif piece == _CLOSE:
            if open_:
                out.append("</mark>")
                open_ = False
        elif piece:
            out.append(escape(piece))
    if open_:
        out.append("</mark>")
    return "".join(out)


def chunk_snippet(text: str, q: str) -> str:
    """HTML of a window of about SNIPPET_WORDS words of text from just before its first match, with every
    word the query matched (the same words the search matched: whole words, the last word as a prefix) in
    <mark>; "…" where the text was cut."""
    words = query_words(q)
    whole, last = set(words[:-1]), words[-1] if words else None
    found = list(WORD.finditer(text))

    def hit(token: str) -> bool:
        t = term(token)
        return t in whole or (last is not None and word_matches(last, t, prefix=True))

    marked = [hit(m.group(0)) for m in found]
    first = marked.index(True) if True in marked else 0
    start = max(0, min(first - _LEAD, len(found) - SNIPPET_WORDS))
    end = min(len(found), start + SNIPPET_WORDS)
    at = 0 if start == 0 else found[start].start()
    stop = len(text) if end == len(found) else found[end - 1].end()
    out = ["…"] if start else []
    for m, is_hit in zip(found[start:end], marked[start:end], strict=True):
        if is_hit:
            out += [escape(text[at : m.start()]), "<mark>", escape(m.group(0)), "</mark>"]
            at = m.end()
    out.append(escape(text[at:stop]))
    if end < len(found):
        out.append("…")
    return "".join(out)


def highlight_html(text: str, q: str) -> str:
    """HTML of a whole text with the query's words (each a prefix, two letters or more) wrapped in <mark>.

    Matches are found in the raw text and the text is escaped around them, so `lt` marks the word `lt`
    and never the inside of the `&lt;` that escaping a `<` makes."""
    words = [w for w in query_words(q) if len(w) > 1]
    if not words:
        return escape(text)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\w*", re.IGNORECASE)
    out, at = [], 0
    for match in pattern.finditer(text):
        out += [escape(text[at : match.start()]), "<mark>", escape(match.group(0)), "</mark>"]
        at = match.end()
    out.append(escape(text[at:]))
    return "".join(out)
