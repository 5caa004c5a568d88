"""Crossed runs: where two compared runs differ in exactly one pinned field and answer the same questions,
compare says so and attributes the movement to that factor; otherwise it says why it cannot."""

import pytest

from tests.comparisons.support import PINNED, build_300, import_run, qids, run_command

pytestmark = pytest.mark.django_db


def test_one_pinned_field_on_the_same_questions_is_the_cause(tmp_path):
    build_300(tmp_path)
    out = run_command("compare", "A", "B")
    assert out["attribution"] == {
        "attributed": True,
        "factor": "prompt_hash",
        "a": PINNED["prompt_hash"],
        "b": "p2",
        "factors": ["prompt_hash"],
        "diff_points": 8.0,
        "ci95": out["ci95"],
        "words": "Only prompt_hash differs (p1 → p2) and both runs answer the same 300 questions of one dataset "
        "version, so the movement, +8.0 points [3.3, 12.7], is the prompt_hash change's.",
    }


def test_two_pinned_fields_are_not_attributed(tmp_path):
    v, _ = build_300(tmp_path, repeats=False)
    ids = qids(300)
    import_run(
        tmp_path,
        run_id="C",
        system="rag-v3",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        correct={i: n < 240 for n, i in enumerate(ids)},
        prompt_hash="p2",
        model_snapshot="gpt-y-2026-07-01",
    )
    att = run_command("compare", "A", "C")["attribution"]
    assert (att["attributed"], att["factor"], att["factors"]) == (False, None, ["model_snapshot", "prompt_hash"])
    assert att["words"] == (
        "2 pinned fields differ (model_snapshot, prompt_hash): the movement cannot be put down to one of them; "
        "compare runs that differ in one."
    )


def test_a_repeat_has_no_factor(tmp_path):
    build_300(tmp_path)
    att = run_command("compare", "A", "A-rerun-1")["attribution"]
    assert (att["attributed"], att["factor"], att["factors"]) == (False, None, [])
    assert att["words"] == (
        "No pinned field differs: the runs are repeats of one configuration, and the movement is run-to-run noise."
    )


def test_one_field_on_other_questions_is_not_attributed(tmp_path):
    v, _ = build_300(tmp_path, repeats=False)
    ids = qids(300)
    import_run(
        tmp_path,
        run_id="D",
        system="rag-v2",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        correct={i: n % 3 > 0 for n, i in enumerate(ids[:290])},
        index_id="prod-index@2026-07-01",
    )
    out = run_command("compare", "A", "D")
    assert out["pairing"]["dropped"] == 10
    att = out["attribution"]
    assert (att["attributed"], att["factor"], att["factors"]) == (False, "index_id", ["index_id"])
    assert att["words"] == (
        "Only index_id differs (prod-index@2026-06-02 → prod-index@2026-07-01), but the questions compared are not "
        "the same (10 dropped from the pairing): the movement mixes the index_id change with the change of population."
    )


def test_the_text_output_the_api_and_the_page_say_what_moved_it(tmp_path, client, make_user, api_client_for):
    import io

    from django.core.management import call_command

    build_300(tmp_path)
    out = io.StringIO()
    call_command("compare", "A", "B", stdout=out)
    assert (
        "  what moved it: Only prompt_hash differs (p1 → p2) and both runs answer the same 300 questions of one "
        "dataset version, so the movement, +8.0 points [3.3, 12.7], is the prompt_hash change's."
    ) in out.getvalue().splitlines()
    api = api_client_for("eng-api", "engineer").get("/api/compare/", {"a": "A", "b": "B"}).json()
    assert (api["attribution"]["attributed"], api["attribution"]["factor"]) == (True, "prompt_hash")
    make_user("eng", "engineer", password="pw-engineer")
    client.login(username="eng", password="pw-engineer")
    page = client.get("/compare/", {"a": "A", "b": "B"}).content.decode()
    assert "<strong>prompt_hash</strong>: Only prompt_hash differs (p1 → p2)" in page
