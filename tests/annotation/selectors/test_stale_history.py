"""Stale gold over time (check_labels --history, the stale-history API) and the re-tagging queue."""

import json

import pytest

from tests.conftest import CORPUS, run_cmd, write_jsonl

SEC_CHANGED = dict(
    CORPUS[1], text="Passwords rotate every thirty days.\n\nSingle sign-on is available on Enterprise plans."
)


def _import(tmp_path, name, docs):
    from annotation.services.corpus import corpus_import

    corpus_import(path=write_jsonl(tmp_path / name, docs))


def _state(newest: int, retired: int) -> str:
    """The state after the `newest`-th chunk of this test (PostgreSQL's ids do not restart per test)."""
    from annotation.models import Chunk

    first = Chunk.objects.order_by("pk").values_list("pk", flat=True).first() or 1
    return f"2:{first - 1 + newest}:{retired}"


def _state_times():
    from annotation.models import Chunk

    times = set(Chunk.objects.values_list("created_at", flat=True))
    times |= {t for t in Chunk.objects.filter(retired=True).values_list("retired_at", flat=True) if t is not None}
    return [t.isoformat() for t in sorted(times)]


@pytest.mark.django_db
def test_history_follows_the_corpus_and_ends_on_the_check(tmp_path, loaded):
    from annotation.selectors.gold import corpus_state

    # State 1: the corpus the set was made on (5 chunks). State 2: SEC/12's first passage changed (one
    # retired, one added): q-0002's gold text is nowhere. State 3: the passage back: fresh again.
    _import(tmp_path, "c2.jsonl", [SEC_CHANGED])
    code, out, _ = run_cmd("check_labels", "--dataset", "support", "--json")
    assert code == 1 and json.loads(out)["stale_share"] == 0.5
    _import(tmp_path, "c3.jsonl", [CORPUS[1]])
    times = _state_times()
    assert len(times) == 3
    code, out, _ = run_cmd("check_labels", "--dataset", "support", "--history", "--json")
    assert code == 0
    assert json.loads(out) == {
        "dataset": "support",
        "version": 1,
        "dataset_hash": loaded.dataset_hash,
        "checked": 2,
        "history": [
            {"corpus_state": _state(5, 0), "began": times[0], "checked": 2, "stale": 0, "stale_share": 0.0},
            {"corpus_state": _state(6, 1), "began": times[1], "checked": 2, "stale": 1, "stale_share": 0.5},
            {"corpus_state": _state(7, 2), "began": times[2], "checked": 2, "stale": 0, "stale_share": 0.0},
        ],
    }
    assert corpus_state() == _state(7, 2)
    code, check, _ = run_cmd("check_labels", "--dataset", "support", "--json")
    assert code == 0 and json.loads(check)["stale_share"] == json.loads(out)["history"][-1]["stale_share"]


@pytest.mark.django_db
def test_history_last_point_is_the_check_when_stale(tmp_path, loaded):
    _import(tmp_path, "c2.jsonl", [SEC_CHANGED])
    code, out, _ = run_cmd("check_labels", "--dataset", "support", "--history", "--json")
    history = json.loads(out)["history"]
    check = json.loads(run_cmd("check_labels", "--dataset", "support", "--json")[1])
    assert code == 1
    assert [(h["stale"], h["stale_share"]) for h in history] == [(0, 0.0), (1, 0.5)]
    assert history[-1]["stale_share"] == check["stale_share"] and history[-1]["corpus_state"] == check["corpus_state"]
    text = run_cmd("check_labels", "--dataset", "support", "--history")[2]  # exit 1: the text goes to stderr
    assert text.splitlines()[0] == "support v1: 2 gold labels checked in each corpus state"
    assert text.splitlines()[2].endswith(f"corpus {_state(6, 1)}: 1 stale (50.0%)")


@pytest.mark.django_db
def test_check_labels_without_history_keeps_its_object(loaded):
    code, out, _ = run_cmd("check_labels", "--dataset", "support", "--json")
    assert code == 0 and sorted(json.loads(out)) == sorted(
        ["dataset_hash", "checked", "stale", "stale_share", "moved", "extra_not_live", "corpus_state"]
    )


@pytest.mark.django_db
def test_history_of_a_moved_passage_counts_it_fresh_from_when_it_appeared(tmp_path, loaded):
    # The gold text of q-0002 leaves SEC/12 and appears in a new document: moved, not stale, from then on.
    moved = {
        "doc_id": "confluence:SEC/99",
        "title": "New",
        "source": "confluence",
        "text": "Passwords rotate every ninety days.",
    }
    _import(tmp_path, "c2.jsonl", [SEC_CHANGED])
    _import(tmp_path, "c3.jsonl", [moved])
    from annotation.models import DatasetVersion
    from annotation.selectors.stale_history import stale_history

    history = stale_history(DatasetVersion.objects.get())
    assert [h["stale"] for h in history["history"]] == [0, 1, 0]


@pytest.mark.django_db
@pytest.mark.parametrize("extra_states", [2, 8])
def test_history_statements_do_not_grow_with_the_states(tmp_path, loaded, extra_states, django_assert_max_num_queries):
    from annotation.models import DatasetVersion
    from annotation.selectors.stale_history import stale_history

    for n in range(extra_states):
        _import(
            tmp_path, f"x{n}.jsonl", [{"doc_id": f"other:{n}", "title": "x", "source": "s", "text": f"Other text {n}."}]
        )
    version = DatasetVersion.objects.get()
    stale_history(version)  # the live check kept, as after any earlier check
    with django_assert_max_num_queries(8):
        history = stale_history(version)
    assert len(history["history"]) == 1 + extra_states


@pytest.mark.django_db
def test_stale_history_api(tmp_path, loaded, api_client_for):
    _import(tmp_path, "c2.jsonl", [SEC_CHANGED])
    api = api_client_for("ex", "expert")
    response = api.get("/api/datasets/support/stale-history/")
    assert response.status_code == 200
    assert [(h["corpus_state"], h["stale"]) for h in response.json()["history"]] == [
        (_state(5, 0), 0),
        (_state(6, 1), 1),
    ]
    assert api.get("/api/datasets/support/stale-history/?version=9").status_code in (400, 404)
