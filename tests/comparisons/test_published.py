"""Published figures: recorded as shown, flagged when a later dataset version or evaluator config makes a
later number non-comparable, and corrected beside the figure (never overwritten)."""

import pytest

from annotation.models import Correction, PublishedFigure
from tests.comparisons.support import build_published, import_questions, import_run, q, run_command

pytestmark = pytest.mark.django_db


def test_a_figure_is_recorded_as_shown_and_comparable_until_the_set_changes(tmp_path):
    ids, v1 = build_published(tmp_path)
    fig = run_command("publish_figure", "A", "--to", "Q3 board deck", "--at", "2026-07-01T09:00:00Z")
    assert (fig["run_id"], fig["score"], fig["n"], fig["shown_to"]) == ("A", 0.7, 20, "Q3 board deck")
    assert (fig["dataset_hash"], fig["comparable"], fig["causes"], fig["corrections"]) == (
        v1["dataset_hash"],
        True,
        [],
        [],
    )
    assert fig["shown_at"] == "2026-07-01T09:00:00+00:00"

    # v2 drops the first five questions (all of them right for A): a later number is on another population.
    v2 = import_questions(tmp_path, "support", [q(i) for i in ids[5:]], "v2")
    listed = run_command("published", "--dataset", "support")
    assert (listed["flagged"], listed["uncorrected"]) == (1, 1)
    (row,) = listed["figures"]
    assert row["comparable"] is False and row["latest_dataset_hash"] == v2["dataset_hash"]
    assert row["causes"] == ["dataset v1 → v2: +0 added, −5 removed, ~0 modified"]

    fixed = run_command("correct_figure", str(fig["id"]))
    (c,) = fixed["corrections"]
    # Re-scored on v2: 9 of the 15 remaining questions right.
    assert (c["shown_score"], c["comparable_score"], c["comparable_n"]) == (0.7, 0.6, 15)
    assert (c["comparable_dataset_hash"], c["cause"], c["unresolved"]) == (
        v2["dataset_hash"],
        "dataset v1 → v2: +0 added, −5 removed, ~0 modified",
        "",
    )
    # The figure keeps what was shown.
    assert PublishedFigure.objects.get().score == 0.7
    assert run_command("published")["uncorrected"] == 0


def test_a_later_evaluator_config_flags_the_figure(tmp_path):
    ids, v1 = build_published(tmp_path)
    fig = run_command("publish_figure", "A", "--to", "weekly report")
    import_run(
        tmp_path,
        run_id="A2",
        system="rag-v1",
        dataset="support",
        dataset_hash=v1["dataset_hash"],
        correct={i: n < 15 for n, i in enumerate(ids)},
        started_at="2026-06-09T02:00:00Z",
        evaluator_config_hash="sha256:cfg2",
    )
    (row,) = run_command("published")["figures"]
    assert row["id"] == fig["id"] and row["comparable"] is False
    assert row["causes"] == [
        "later runs of rag-v1 were scored under another evaluator config (sha256:cfg2) than the figure's (sha256:cfg1)"
    ]


def test_an_added_question_the_run_never_answered_leaves_no_comparable_figure(tmp_path):
    ids, _ = build_published(tmp_path)
    fig = run_command("publish_figure", "A", "--to", "deck")
    import_questions(tmp_path, "support", [q(i) for i in [*ids, "q-0100"]], "v2")
    (c,) = run_command("correct_figure", str(fig["id"]))["corrections"]
    assert (c["comparable_score"], c["comparable_n"]) == (None, 20)
    assert c["unresolved"] == (
        "no comparable figure on v2: 1 of its questions the run did not answer, 0 it cannot re-grade "
        "(human labels and verdicts given against the old records)"
    )


def test_refusals_write_nothing(tmp_path):
    build_published(tmp_path)
    assert run_command("publish_figure", "nope", "--to", "deck", expect=2)["error"] == "unknown run 'nope'"
    out = run_command("publish_figure", "A", "--to", "  ", expect=2)
    assert out["problems"] == [{"message": "say to whom the figure was shown", "line": None, "field": "shown_to"}]
    out = run_command("publish_figure", "A", "--to", "deck", "--at", "yesterday", expect=2)
    assert out["error"] == "--at 'yesterday' is not an ISO 8601 date and time"
    assert PublishedFigure.objects.count() == 0

    fig = run_command("publish_figure", "A", "--to", "deck")
    out = run_command("correct_figure", str(fig["id"]), expect=2)
    assert out["error"].startswith(f"published figure {fig['id']} is still comparable with the latest version")
    assert run_command("correct_figure", "999", expect=2)["error"] == "unknown published figure 999"
    assert Correction.objects.count() == 0
    # With a cause given, a correction of a comparable figure is kept (a figure misread for another reason).
    kept = run_command("correct_figure", str(fig["id"]), "--cause", "shown as a pass rate of all questions")
    assert [c["cause"] for c in kept["corrections"]] == ["shown as a pass rate of all questions"]


def test_the_api_publishes_lists_and_corrects(tmp_path, api_client_for):
    ids, _ = build_published(tmp_path)
    api = api_client_for("eng", "engineer")
    res = api.post("/api/published/", {"run_id": "A", "shown_to": "Q3 board deck"}, format="json")
    assert res.status_code == 201
    fig = res.json()
    assert (fig["score"], fig["n"], fig["comparable"], fig["created_by"]) == (0.7, 20, True, "eng")

    bad = api.post("/api/published/", {"run_id": "A"}, format="json")
    assert bad.status_code == 400 and "shown_to" in str(bad.json())
    assert api.post("/api/published/", {"run_id": "nope", "shown_to": "x"}, format="json").status_code == 404
    assert PublishedFigure.objects.count() == 1
    refused = api.post(f"/api/published/{fig['id']}/correct/", {}, format="json")
    assert refused.status_code == 400 and Correction.objects.count() == 0

    import_questions(tmp_path, "support", [q(i) for i in ids[5:]], "v2")
    (row,) = api.get("/api/published/", {"dataset": "support"}).json()["figures"]
    assert row["comparable"] is False
    res = api.post(f"/api/published/{fig['id']}/correct/", {}, format="json")
    assert res.status_code == 201
    assert [(c["comparable_score"], c["created_by"]) for c in res.json()["corrections"]] == [(0.6, "eng")]
    assert api_client_for("ann", "annotator").get("/api/published/").status_code == 403


def test_the_pages_mark_flag_and_correct(tmp_path, client, make_user):
    ids, _ = build_published(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    client.login(username="eng", password="pw-engineer")
    res = client.post("/runs/A/published/", {"shown_to": "Q3 board deck"})
    assert res.status_code == 302 and res["Location"] == "/runs/A/"
    page = client.get("/runs/A/").content.decode()
    assert "Marked 0.700 of A as shown to Q3 board deck." in page
    assert "comparable with the latest version" in page and 'data-testid="published-flag"' not in page

    client.post("/runs/A/published/", {"shown_to": " "})
    assert "say to whom the figure was shown" in client.get("/runs/A/").content.decode()
    assert PublishedFigure.objects.count() == 1

    import_questions(tmp_path, "support", [q(i) for i in ids[5:]], "v2")
    series_page = client.get("/series/", {"dataset": "support"}).content.decode()
    assert (
        '<strong data-testid="published-flag">not comparable</strong>: dataset v1 → v2: +0 added, −5 removed'
        in series_page
    )
    fig = PublishedFigure.objects.get()
    res = client.post(f"/published/{fig.pk}/correct/", {"next": "/series/?dataset=support"})
    assert res.status_code == 302 and res["Location"] == "/series/?dataset=support"
    series_page = client.get("/series/", {"dataset": "support"}).content.decode()
    assert "shown 0.700, comparable <strong>0.600</strong> (n=15)" in series_page
    assert Correction.objects.count() == 1
    # An annotator reaches neither form.
    make_user("ann", "annotator", password="pw-annotator")
    client.login(username="ann", password="pw-annotator")
    assert client.post("/runs/A/published/", {"shown_to": "x"}).status_code == 403
    assert client.post(f"/published/{fig.pk}/correct/", {}).status_code == 403
    assert (PublishedFigure.objects.count(), Correction.objects.count()) == (1, 1)
