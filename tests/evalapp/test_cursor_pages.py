"""API lists page by keyset on request (`?page_size=`, then the `next` link's `?cursor=`): every row once,
in id order, the same statements on every page; without those parameters a list answers as before."""

import pytest

from annotation.models import Answer
from tests import factories as f


@pytest.fixture
def answers_world(db, api_client_for):
    run = f.RunFactory(run_id="paged")
    for k in range(7):
        f.AnswerFactory(run=run, qid=f"q-{k}")
    return api_client_for("eng", "engineer")


@pytest.mark.django_db
def test_keyset_pages_walk_every_answer_once(answers_world, django_assert_max_num_queries):
    client = answers_world
    seen, url, pages = [], "/api/runs/paged/answers/?page_size=3", 0
    while url:
        with django_assert_max_num_queries(8):
            body = client.get(url).json()
        assert set(body) == {"count", "next", "previous", "results"}
        assert body["count"] == 7
        assert len(body["results"]) <= 3
        seen += [a["qid"] for a in body["results"]]
        url, pages = body["next"], pages + 1
    assert pages == 3
    assert seen == list(Answer.objects.filter(run__run_id="paged").order_by("pk").values_list("qid", flat=True))


@pytest.mark.django_db
def test_without_page_parameters_the_list_is_as_before(answers_world):
    whole = answers_world.get("/api/runs/paged/answers/").json()
    assert whole["count"] == 7 and whole["next"] is None and len(whole["results"]) == 7
    offset = answers_world.get("/api/runs/paged/answers/?limit=2&offset=6").json()
    assert offset["count"] == 7 and [a["qid"] for a in offset["results"]] == ["q-6"]


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["cursor=not-a-cursor", "page_size=0", "page_size=lots", "page_size=1001"])
def test_a_bad_cursor_or_page_size_is_refused_by_name(answers_world, query):
    response = answers_world.get(f"/api/runs/paged/answers/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.content.decode()
