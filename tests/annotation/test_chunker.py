"""The paragraph chunker: paragraphs, long ones cut at sentences then words, verbatim slices of the document."""
from annotation.chunker import chunk_id, chunk_text


def test_chunker_splits_paragraphs_and_caps_long_ones_at_sentences():
    text = "First para.\n\n\nSecond para line one.\nline two.\n\n" + " ".join(["A sentence here."] * 30)
    chunks = chunk_text(text, max_chars=100)
    assert chunks[0] == "First para."
    assert chunks[1] == "Second para line one.\nline two."
    assert all(len(c) <= 100 for c in chunks)
    assert " ".join(chunks[2:]) == " ".join(["A sentence here."] * 30)
    assert chunk_id("confluence:PRICE/8821", 3) == "confluence:PRICE/8821#0003"


def test_chunker_cuts_a_sentence_longer_than_the_cap_at_words():
    chunks = chunk_text("word " * 100, max_chars=50)
    assert all(len(c) <= 50 for c in chunks)
    assert " ".join(chunks).split() == ["word"] * 100


def test_chunks_are_verbatim_slices_of_the_document():
    from annotation.chunker import chunk_text

    text = "Line one ends.\nLine two ends here.  Three? " * 60
    chunks = chunk_text(text, max_chars=200)
    assert len(chunks) > 5 and all(c in text and len(c) <= 200 for c in chunks)
