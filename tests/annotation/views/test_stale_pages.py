"""The stale-gold chart on the dataset page and the re-tagging queue of the tagging list."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.services.users import user_upsert
from tests.conftest import CORPUS, write_jsonl
from tests.machine_numbers import assert_machine_numbers_plain, page_in_german

PASSWORD = "pw-stale-123456"
# Both gold passages change: q-0001 and q-0002 are stale, q-0003 (not answerable) has no gold to check.
CHANGED = [
    dict(CORPUS[0], text=CORPUS[0]["text"].replace("thirty (30) days", "fourteen (14) days")),
    dict(CORPUS[1], text=CORPUS[1]["text"].replace("ninety", "thirty")),
]


def client_for(username, *roles):
    user_upsert(username=username, roles=list(roles), password=PASSWORD)
    c = Client()
    assert c.login(username=username, password=PASSWORD)
    c.user = get_user_model().objects.get(username=username)  # type: ignore[attr-defined]
    return c


@pytest.fixture
def decayed(tmp_path, loaded):
    from annotation.services.corpus import corpus_import

    corpus_import(path=write_jsonl(tmp_path / "changed.jsonl", CHANGED))
    return loaded


@pytest.mark.django_db
def test_dataset_page_draws_the_history_with_the_band_and_the_figure(decayed):
    expert = client_for("ex", "expert")
    html = expert.get("/datasets/support/").content.decode()
    assert 'data-testid="stale-chart"' in html and '<title id="stale-chart-title">' in html
    assert "5–8 %: expected after six months of normal editing" in html
    assert "Now 2 of 2 gold labels of v1 are stale (100.0 %), in 2 corpus states" in html
    assert 'href="/tagging/support/?stale=1" data-testid="retag-link">Re-tag the stale gold (2)' in html
    assert "<td>2</td><td>1.0000</td>" in html and "<td>0</td><td>0.0000</td>" in html
    # No inline style: the CSP forbids it (presentation attributes and classes only).
    chart = html[
        html.index('<svg role="img" aria-labelledby="stale-chart-title"') : html.index(
            "</svg>", html.index("stale-chart-title")
        )
    ]
    assert "style=" not in chart


@pytest.mark.django_db
def test_adjudicator_sees_the_chart_without_the_retag_link(decayed):
    html = client_for("adj", "adjudicator").get("/datasets/support/").content.decode()
    assert 'data-testid="stale-chart"' in html and 'data-testid="retag-link"' not in html


@pytest.mark.django_db
def test_retag_queue_lists_the_stale_ones_and_a_retagged_one_leaves(decayed):
    from annotation.models import Dataset
    from annotation.selectors.stale_history import retag_qids
    from annotation.services.working import working_edit

    dataset = Dataset.objects.get(name="support")
    assert retag_qids(dataset) == ["q-0001", "q-0002"]
    expert = client_for("ex", "expert")
    html = expert.get("/tagging/support/?stale=1").content.decode()
    assert "Stale gold (2)" in html and 'data-qid="q-0001"' in html and 'data-qid="q-0002"' in html
    assert 'data-qid="q-0003"' not in html
    # An edit that leaves the gold alone keeps it in the queue; a new gold passage takes it out.
    working_edit(
        dataset_name="support", qid="q-0001", changes={"expected": "30 days!"}, base_revision=0, user=expert.user
    )
    assert retag_qids(dataset) == ["q-0001", "q-0002"]
    working_edit(
        dataset_name="support",
        qid="q-0001",
        changes={"gold_chunk_id": "confluence:PRICE/8821#0001", "gold_text": "fourteen (14) days"},
        base_revision=1,
        user=expert.user,
    )
    assert retag_qids(dataset) == ["q-0002"]
    html = expert.get("/tagging/support/?stale=1").content.decode()
    assert "Stale gold (1)" in html and 'data-qid="q-0001"' not in html and 'data-qid="q-0002"' in html


@pytest.mark.django_db
def test_next_walks_only_the_stale_ones_in_the_retag_queue(decayed):
    from annotation.services.working import working_edit

    expert = client_for("ex", "expert")
    assert expert.get("/tagging/support/q/q-0001/next/?stale=1")["Location"] == "/tagging/support/q/q-0002/?stale=1"
    working_edit(
        dataset_name="support",
        qid="q-0002",
        changes={"gold_text": "Passwords rotate every thirty days."},
        base_revision=0,
        user=expert.user,
    )
    # q-0002 re-tagged: the stale walk ends after q-0001 (back to the queue); the plain queue goes on.
    assert expert.get("/tagging/support/q/q-0001/next/?stale=1")["Location"] == "/tagging/support/?stale=1"
    assert expert.get("/tagging/support/q/q-0001/next/")["Location"] == "/tagging/support/q/q-0002/"


@pytest.mark.django_db
def test_retag_queue_is_empty_without_a_version(db):
    from annotation.models import Dataset
    from annotation.selectors.stale_history import retag_qids

    assert retag_qids(Dataset.objects.create(name="empty")) == []
    html = client_for("ex", "expert").get("/datasets/empty/").content.decode()
    assert "No published version yet." in html


@pytest.mark.django_db
def test_the_stale_chart_draws_in_german_too(decayed):
    expert = client_for("ex", "expert")
    html = page_in_german(expert, "/datasets/support/")
    assert 'data-testid="stale-chart"' in html
    assert_machine_numbers_plain(html, at_least=20)
