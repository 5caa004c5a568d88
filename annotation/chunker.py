"""The corpus chunker: paragraphs, with long paragraphs split at sentence ends under a size cap.

Every chunk is a verbatim slice of its paragraph (whitespace inside it kept), so a sentence copied
from a chunk is also found in the document.
"""

import re

DEFAULT_MAX_CHARS = 1200

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r".+?(?:[.!?](?=\s)|$)", re.DOTALL)
_WORD = re.compile(r"\S+")


def chunk_text(text: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Split text into passages: one per paragraph, long ones cut at sentence ends (words as a last resort).

    Deterministic, so re-importing unchanged text gives the same chunks and the same ids.
    """
    chunks: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text.replace("\r\n", "\n")):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= max_chars:
            chunks.append(paragraph)
            continue
        spans = [m.span() for m in _SENTENCE.finditer(paragraph) if m.group().strip()]
        chunks.extend(_pack(paragraph, spans, max_chars))
    return chunks


def _pack(text: str, spans: list[tuple[int, int]], max_chars: int) -> list[str]:
    """Greedily join consecutive spans of text into slices no longer than max_chars (after stripping);
    a span longer than the cap is cut at words, and a word longer than the cap at the cap."""
    out: list[str] = []
    start = end = None
    for s, e in spans:
        piece = text[s:e].strip()
        if not piece:
            continue
        s = s + (len(text[s:e]) - len(text[s:e].lstrip()))
        if len(piece) > max_chars:
            if start is not None:
                out.append(text[start:end].strip())
                start = None
            words = [m.span() for m in _WORD.finditer(text, s, e)]
            if len(words) > 1:
                out.extend(_pack(text, words, max_chars))
            else:
                out.extend(piece[i : i + max_chars] for i in range(0, len(piece), max_chars))
            continue
        if start is None:
            start, end = s, e
        elif len(text[start:e].strip()) <= max_chars:
            end = e
        else:
            out.append(text[start:end].strip())
            start, end = s, e
    if start is not None:
        out.append(text[start:end].strip())
    return out


def chunk_id(doc_id: str, ordinal: int) -> str:
    """`DOC_ID#NNNN`, the 4-digit ordinal from 0000."""
    return f"{doc_id}#{ordinal:04d}"
