"""The tagging pages: who may open them (annotators get 403 on pages and their API, and nothing changes),
what they show, and publishing only what was reviewed."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from annotation.models import DatasetVersion, EditAudit, WorkingExample
from annotation.services.users import user_upsert
from annotation.services.working import working_edit

PASSWORD = "pw-tagging-123"


def client_for(username, *roles):
    user_upsert(username=username, roles=list(roles), password=PASSWORD)
    c = Client()
    assert c.login(username=username, password=PASSWORD)
    c.user = get_user_model().objects.get(username=username)
    return c


PAGES = [
    "/tagging/",
    "/tagging/support/",
    "/tagging/support/q/q-2/",
    "/tagging/support/q/q-2/next/",
    "/tagging/support/search/?q=legacy",
    "/tagging/support/chunk/?chunk_id=kb:PRICE%230001",
    "/tagging/support/publish/",
    "/tagging/support/stats/",
]


@pytest.mark.parametrize("url", PAGES)
def test_annotator_gets_403_on_every_page(ds, url):
    annotator = client_for("ann", "annotator")
    assert annotator.get(url).status_code == 403


@pytest.mark.parametrize("url", PAGES)
def test_anonymous_is_sent_to_login(ds, url):
    response = Client().get(url)
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.parametrize("role", ["expert", "engineer"])
@pytest.mark.parametrize("url", PAGES)
def test_experts_and_engineers_open_every_page(ds, role, url):
    response = client_for("pat", role).get(url)
    assert response.status_code in (200, 302)


def test_annotator_cannot_post_publish_nor_use_the_api(ds):
    annotator = client_for("ann", "annotator")
    versions = DatasetVersion.objects.count()
    assert annotator.post("/tagging/support/publish/", {"working_hash": ""}).status_code == 403
    api = APIClient()
    api.force_authenticate(annotator.user)
    assert api.get("/api/chunks/", {"q": "legacy"}).status_code == 403
    assert api.get("/api/chunks/detail/", {"chunk_id": "kb:PRICE#0001"}).status_code == 403
    assert api.get("/api/datasets/support/working/").status_code == 403
    assert api.get("/api/datasets/support/working/q-2/").status_code == 403
    assert (
        api.patch(
            "/api/datasets/support/working/q-2/", {"changes": {"expected": "x"}, "base_revision": 0}, format="json"
        ).status_code
        == 403
    )
    assert api.post("/api/datasets/support/publish/", {}, format="json").status_code == 403
    assert api.get("/api/datasets/support/audit/").status_code == 403
    assert WorkingExample.objects.count() == 0 and EditAudit.objects.count() == 0
    assert DatasetVersion.objects.count() == versions


def test_question_page_carries_the_record_and_the_save_endpoint(ds):
    expert = client_for("eve", "expert")
    response = expert.get("/tagging/support/q/q-1/?status=untagged")
    assert response.status_code == 200
    html = response.content.decode()
    state = json.loads(html.split('<script id="tagging-state" type="application/json">')[1].split("</script>")[0])
    assert state["qid"] == "q-1" and state["revision"] == 0 and state["username"] == "eve"
    assert state["record"]["gold_chunk_id"] == "kb:PRICE#0001"
    assert state["api"] == "/api/datasets/support/working/q-1/"
    assert state["next_url"] == "/tagging/support/q/q-1/next/?status=untagged"
    assert state["no_answer_stratum"] == "no_answer"
    assert 'id="asked-by">support<' in html
    assert expert.get("/tagging/support/q/q-404/").status_code == 404


def test_search_fragment_highlights_and_filters(ds):
    expert = client_for("eve", "expert")
    html = expert.get("/tagging/support/search/", {"q": "legacy enter"}).content.decode()
    assert 'data-chunk-id="kb:PRICE#0001"' in html and "<mark>" in html
    assert 'data-chunk-id="kb:SEC' not in html
    assert (
        "data-chunk-id"
        not in expert.get("/tagging/support/search/", {"q": "legacy", "source": "wiki"}).content.decode()
    )
    only = expert.get("/tagging/support/search/", {"q": "enterprise", "doc_id": "kb:SEC"}).content.decode()
    assert 'data-chunk-id="kb:SEC#0001"' in only and "kb:PRICE" not in only


def test_chunk_fragment_shows_neighbours(ds):
    html = (
        client_for("eve", "expert")
        .get("/tagging/support/chunk/", {"chunk_id": "kb:PRICE#0001", "q": "trials"})
        .content.decode()
    )
    assert 'data-chunk-id="kb:PRICE#0001"' in html
    assert 'class="open-chunk prev-chunk mono" data-chunk-id="kb:PRICE#0000"' in html
    assert 'class="open-chunk next-chunk mono" data-chunk-id="kb:PRICE#0002"' in html
    assert "<mark>trials</mark>" in html


def test_next_follows_filters_and_ends_at_the_queue(ds):
    expert = client_for("eve", "expert")
    assert (
        expert.get("/tagging/support/q/q-2/next/?status=untagged")["Location"]
        == "/tagging/support/q/q-4/?status=untagged"
    )
    assert expert.get("/tagging/support/q/q-4/next/?status=untagged")["Location"] == "/tagging/support/?status=untagged"
    assert expert.get("/tagging/support/q/q-2/next/?step=-1")["Location"] == "/tagging/support/q/q-1/"


def test_queue_shows_progress_and_stale_retag_link(ds, tmp_path):
    from annotation.services.corpus import corpus_import
    from tests.annotation.conftest import CORPUS, write

    corpus_import(path=write(tmp_path / "c2.jsonl", [dict(CORPUS[0], text="Intro.\n\n" + CORPUS[0]["text"])]))
    html = client_for("eve", "expert").get("/tagging/support/?status=flagged").content.decode()
    assert 'href="/tagging/support/q/q-1/?retag=1&amp;status=flagged">Re-tag</a>' in html
    assert 'data-qid="q-2"' not in html
    page = client_for("ola", "expert").get("/tagging/support/q/q-1/?retag=1").content.decode()
    assert 'data-open-on-load="kb:PRICE#0002"' in page and 'id="stale-note"' in page


def test_publish_shows_the_diff_then_publishes_exactly_it(ds):
    expert = client_for("eve", "expert")
    working_edit(dataset_name="support", qid="q-2", changes={"expected": "90 days"}, base_revision=0, user=expert.user)
    page = expert.get("/tagging/support/publish/")
    diff = page.context["diff"]
    assert [m["qid"] for m in diff["modified"]] == ["q-2"] and diff["added"] == [] and diff["removed"] == []
    assert "<strong>1</strong> modified" in page.content.decode()
    assert ">Publish this change</button>" in page.content.decode()
    # someone saves between review and confirmation: refused, nothing published, the new diff shown
    working_edit(dataset_name="support", qid="q-4", changes={"expected": "ask back"}, base_revision=0, user=expert.user)
    stale_confirm = expert.post("/tagging/support/publish/", {"working_hash": diff["working_hash"]})
    assert stale_confirm.status_code == 409
    assert DatasetVersion.objects.filter(dataset__name="support").count() == 1
    fresh = stale_confirm.context["diff"]
    assert ">Publish these 2 changes</button>" in stale_confirm.content.decode()
    assert [m["qid"] for m in fresh["modified"]] == ["q-2", "q-4"]
    done = expert.post("/tagging/support/publish/", {"working_hash": fresh["working_hash"], "note": "first tags"})
    assert done.status_code == 302 and done["Location"] == "/tagging/support/"
    latest = DatasetVersion.objects.filter(dataset__name="support").order_by("-number").first()
    assert (latest.number, latest.modified, latest.dataset_hash, latest.note, latest.created_by.username) == (
        2,
        2,
        fresh["working_hash"],
        "first tags",
        "eve",
    )
    nothing = expert.post("/tagging/support/publish/", {"working_hash": fresh["working_hash"]})
    assert nothing.status_code == 409 and DatasetVersion.objects.filter(dataset__name="support").count() == 2


def test_stats_page_lists_experts(ds):
    expert = client_for("eve", "expert")
    working_edit(
        dataset_name="support",
        qid="q-2",
        changes={"expected": "90 days"},
        base_revision=0,
        user=expert.user,
        active_seconds=30,
    )
    html = expert.get("/tagging/support/stats/").content.decode()
    assert '<tr data-expert="eve"><td>eve</td><td>1</td><td>120.0</td><td>30.0</td><td>30.0 s</td></tr>' in html


def test_stats_page_says_how_long_the_untagged_questions_take(ds):
    expert = client_for("eve", "expert")
    working_edit(
        dataset_name="support",
        qid="q-2",
        changes={
            "gold_chunk_id": "kb:SEC#0000",
            "gold_doc_id": "kb:SEC",
            "gold_text": "Passwords rotate every ninety days.",
        },
        base_revision=0,
        user=expert.user,
        active_seconds=42,
    )
    html = expert.get("/tagging/support/stats/").content.decode()
    sentence = "The 1 untagged question needs about 42 s at the team&#x27;s median (42 s a question)."
    assert f'<p id="projection" data-testid="projection"><strong>{sentence}</strong></p>' in html
    assert '<tr data-person="eve"><td>eve</td><td class="nowrap">1 (1)</td>' in html
    assert "python manage.py label_time --dataset support --json" in html
    assert "GET /api/datasets/support/label-time/" in html


def test_home_lists_datasets_when_there_are_several(ds, tmp_path):
    from annotation.services.datasets import questions_import
    from tests.annotation.conftest import QUESTIONS, write

    questions_import(path=write(tmp_path / "q2.jsonl", QUESTIONS[:1]), dataset_name="sales")
    html = client_for("eve", "expert").get("/tagging/").content.decode()
    assert '<a href="/tagging/sales/">sales</a>' in html and '<a href="/tagging/support/">support</a>' in html


def test_queue_filters_mine_and_stratum(ds):
    expert = client_for("eve", "expert")
    working_edit(
        dataset_name="support",
        qid="q-4",
        changes={"ambiguous": True, "labelled_by": "eve"},
        base_revision=0,
        user=expert.user,
    )
    mine = expert.get("/tagging/support/?mine=1").context["items"]
    assert [(i.qid, i.state) for i in mine] == [("q-4", "ambiguous")]
    policy = expert.get("/tagging/support/?stratum=policy&status=untagged").context["items"]
    assert [i.qid for i in policy] == ["q-2"]
    response = expert.get("/tagging/support/?status=bogus")
    assert (
        response.context["filters"] == {"stratum": "", "status": "", "mine": False, "stale": False}
        and len(response.context["items"]) == 4
    )
