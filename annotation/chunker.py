"""The corpus chunker: paragraphs, with long paragraphs split at sentence ends under a size cap."""
import re

DEFAULT_MAX_CHARS = 1200

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


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
        chunks.extend(_pack(_SENTENCE_END.split(paragraph), max_chars))
    return chunks


def _pack(pieces: list[str], max_chars: int) -> list[str]:
    """Greedily join pieces into passages no longer than max_chars; cut an over-long piece at words."""
    out: list[str] = []
    current = ""
    for piece in pieces:
        if len(piece) > max_chars:
            if current:
                out.append(current)
                current = ""
            out.extend(_pack(piece.split(" "), max_chars) if " " in piece else
                       [piece[i:i + max_chars] for i in range(0, len(piece), max_chars)])
            continue
        candidate = f"{current} {piece}" if current else piece
        if len(candidate) <= max_chars:
            current = candidate
        else:
            out.append(current)
            current = piece
    if current:
        out.append(current)
    return out


def chunk_id(doc_id: str, ordinal: int) -> str:
    """`DOC_ID#NNNN`, the 4-digit ordinal from 0000."""
    return f"{doc_id}#{ordinal:04d}"
