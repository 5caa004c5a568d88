"""The relevance score, in plain Python: the one definition the index stores and the reference ranking uses.

BM25 with a fixed length pivot: a chunk's weight for a term depends on that chunk alone (its term frequency
and its length against PIVOT_LENGTH words, not the corpus average), so importing or retiring other chunks
never rewrites it; only the term's idf moves with the corpus, and it is one number per term. Both are held
as integers (WEIGHT_SCALE, IDF_SCALE) so a score is an exact integer on every database and in Python alike,
and equal scores are truly equal: ties then go to the lower chunk pk, and the order is total.

A query is words, all of which must match; the last one matches as a prefix (results as you type). A word's
score in a chunk is the best idf x weight among the chunk's terms it matches (for a prefix, its best
completion); a chunk's score is the sum over the query's words.
"""

import math
import re
from collections import Counter
from collections.abc import Iterable

K1 = 1.2
B = 0.75
PIVOT_LENGTH = 100  # words; chunks are paragraphs of up to 1,200 characters (about 200 words)
WEIGHT_SCALE = 1 << 16
IDF_SCALE = 1 << 24
SCORE_SCALE = WEIGHT_SCALE * IDF_SCALE
MAX_TERM_LENGTH = 64  # longer words are cut to this (in the index and in queries alike)
MAX_QUERY_WORDS = 32
WORD = re.compile(r"\w+", re.UNICODE)


def term(word: str) -> str:
    """A word (a run of word characters) as the index holds it: lower-cased, cut to MAX_TERM_LENGTH."""
    return word.lower()[:MAX_TERM_LENGTH]


def tokens(text: str) -> list[str]:
    """The terms of a text in order."""
    return [term(w) for w in WORD.findall(text or "")]


def query_words(q: str) -> list[str]:
    """The words of a query, as terms; punctuation and operators are dropped, so no input can break a query."""
    return tokens(q)[:MAX_QUERY_WORDS]


def term_weights(text: str) -> dict[str, int]:
    """Each distinct term of a chunk with its BM25 term weight (without idf), scaled to an integer >= 1."""
    terms = tokens(text)
    norm = K1 * (1 - B + B * len(terms) / PIVOT_LENGTH)
    return {t: max(1, round(tf * (K1 + 1) / (tf + norm) * WEIGHT_SCALE)) for t, tf in Counter(terms).items()}


def idf(df: int, n: int) -> int:
    """BM25's idf (the non-negative form) of a term in df of n live chunks, scaled to an integer >= 1."""
    n = max(n, df)
    return max(1, round(math.log(1 + (n - df + 0.5) / (df + 0.5)) * IDF_SCALE))


def word_matches(word: str, term: str, *, prefix: bool) -> bool:
    return term.startswith(word) if prefix else term == word


def rank_texts(q: str, texts: Iterable[tuple[int, str]]) -> list[tuple[int, int]]:
    """The full ranking of q over (pk, text) pairs, straight from the texts: [(pk, score)], best first, ties
    by pk. The reference the index's top k is checked against (tests, bench); it reads every text."""
    words = query_words(q)
    docs = [(pk, term_weights(text)) for pk, text in texts]
    if not words:
        return []
    n = len(docs)
    df = Counter(t for _, weights in docs for t in weights)
    ranked = []
    for pk, weights in docs:
        total = 0
        for i, word in enumerate(words):
            best = max(
                (idf(df[t], n) * w for t, w in weights.items() if word_matches(word, t, prefix=i == len(words) - 1)),
                default=None,
            )
            if best is None:
                break
            total += best
        else:
            ranked.append((pk, total))
    ranked.sort(key=lambda r: (-r[1], r[0]))
    return ranked
