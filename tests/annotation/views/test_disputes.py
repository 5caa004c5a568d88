"""The adjudication list page and one dispute's page: imported disputes listed with their source and
settled through the form; a refusal is said on the page and writes nothing."""

import pytest

from annotation.models import Adjudication, Answer
from annotation.selectors.disputes import dispute_key
from tests.annotation.conftest import import_disputed_run
from tests.annotation.views.conftest import client_for


@pytest.mark.django_db
def test_the_list_shows_imported_disputes_and_the_form_settles_one(tmp_path, pool):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1, 4))
    key = dispute_key(Answer.objects.get(run__run_id=run_id, qid="q-0001").pk)
    c = client_for(pool["adj"])
    page = c.get("/adjudication/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "<strong>2</strong> disputed answers for you to settle." in html
    assert html.count('<tr data-key="') == 2 and f'href="/adjudication/{key}/"' in html
    assert run_id not in html and "rag-secret" not in html
    detail = c.get(f"/adjudication/{key}/").content.decode()
    assert "How long does plan 1 last?" in detail and "answer 1" in detail
    response = c.post(f"/adjudication/{key}/", {"verdict": "incorrect", "reason": "wrong plan"}, follow=True)
    assert "Settled as incorrect." in response.content.decode()
    assert "<strong>1</strong> disputed answer for you to settle." in response.content.decode()
    assert list(Adjudication.objects.values_list("answer__qid", "verdict", "reason")) == [
        ("q-0001", "incorrect", "wrong plan")
    ]


@pytest.mark.django_db
def test_a_refused_settlement_is_said_and_writes_nothing(tmp_path, pool, make_user):
    run_id = import_disputed_run(tmp_path, n=6, disputed=(1,))
    key = dispute_key(Answer.objects.get(run__run_id=run_id, qid="q-0001").pk)
    c = client_for(pool["adj"])
    response = c.post(f"/adjudication/{key}/", {"verdict": "incorrect", "reason": "  "}, follow=True)
    assert "give the reason for the decision" in response.content.decode()
    labeller = client_for(make_user("ann1", "annotator", "adjudicator"))
    assert labeller.get(f"/adjudication/{key}/").status_code == 403
    assert labeller.get("/adjudication/").content.decode().count('<tr data-key="') == 0
    assert Adjudication.objects.count() == 0
    assert client_for(pool["adj"]).get("/adjudication/?queue=abc").status_code == 400
