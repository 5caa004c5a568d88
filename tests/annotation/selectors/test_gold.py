"""Stale gold checks (check_labels): gold text gone from the live corpus, extra gold passages that are not live."""
import json

import pytest

from tests.conftest import QUESTIONS, run_cmd, write_jsonl


@pytest.mark.django_db
def test_check_labels_finds_gold_text_gone_from_the_live_corpus(tmp_path, loaded):
    from annotation.models import GoldCheckReport
    from annotation.selectors.gold import corpus_state
    from annotation.services.corpus import corpus_import
    from tests.conftest import CORPUS

    code, out, _ = run_cmd("check_labels", "--dataset", "support", "--json")
    state = corpus_state()
    assert code == 0 and json.loads(out) == {"dataset_hash": loaded.dataset_hash, "checked": 2, "stale": [],
                                             "stale_share": 0.0, "moved": [], "extra_not_live": [],
                                             "corpus_state": state}
    # Checked once per corpus state: a second check reads the kept report.
    assert run_cmd("check_labels", "--dataset", "support", "--json")[1] == out
    assert GoldCheckReport.objects.filter(version__dataset_hash=loaded.dataset_hash).count() == 1
    changed = dict(CORPUS[1], text="Passwords rotate every thirty days.\n\nSingle sign-on is available on Enterprise plans.")
    corpus_import(path=write_jsonl(tmp_path / "c2.jsonl", [changed]))
    assert corpus_state() != state   # the import retired a chunk and added one: a new state, checked again
    code, out, _ = run_cmd("check_labels", "--dataset", "support", "--json")
    assert code == 1
    payload = json.loads(out)
    assert GoldCheckReport.objects.filter(version__dataset_hash=loaded.dataset_hash).count() == 2
    assert payload["stale"] == [{"qid": "q-0002", "gold_chunk_id": "confluence:SEC/12#0000", "reason": "gold_text not in the live corpus (gold_text no longer in the chunk)"}]
    assert payload["stale_share"] == 0.5


@pytest.mark.django_db
def test_check_labels_lists_extra_gold_passages_that_are_not_live(tmp_path, corpus_file):
    from annotation.services.corpus import corpus_import
    from annotation.services.datasets import questions_import

    corpus_import(path=corpus_file)
    records = [dict(QUESTIONS[1], gold_extra_chunk_ids=["confluence:SEC/12#0001", "confluence:SEC/12#0009"]),
               dict(QUESTIONS[0], gold_extra_chunk_ids=["confluence:PRICE/8821#0000"])]
    questions_import(path=write_jsonl(tmp_path / "q.jsonl", records), dataset_name="extras")
    code, out, _ = run_cmd("check_labels", "--dataset", "extras", "--json")
    payload = json.loads(out)
    # The gold_text of both is live (exit 0); one extra passage of q-0002 is not a live chunk.
    assert code == 0 and payload["stale"] == []
    assert payload["extra_not_live"] == [{"qid": "q-0002", "chunk_ids": ["confluence:SEC/12#0009"]}]
    code, text, _ = run_cmd("check_labels", "--dataset", "extras")
    assert "extra gold passage(s) of q-0002 no longer live: confluence:SEC/12#0009" in text
