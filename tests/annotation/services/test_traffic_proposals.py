"""Proposing traffic to tag: largest remainder by traffic share, the same under a seed, never twice, never
a question already in the working copy; the proposals are new untagged questions marked from traffic."""

import pytest
from django.db import transaction

from annotation.models import EditAudit, TrafficQuestion, WorkingExample
from annotation.selectors.datasets import working_records
from annotation.selectors.tagging import tagging_list
from annotation.services.traffic_proposals import traffic_propose
from annotation.services.working import working_edit
from evalapp.errors import ServiceError
from tests.annotation.selectors.test_traffic_coverage import classified_world

pytestmark = pytest.mark.django_db


class Rollback(Exception):
    pass


def test_the_allocation_follows_the_traffic_shares_and_the_records_are_marked(tmp_path):
    dataset = classified_world(tmp_path)
    # Candidates: billing 3 (weight 5), account 1 (1), other 1 (1). K=3: quotas 2.14, 0.43, 0.43; the
    # leftover seat goes to the tie's first name, account.
    proposed = traffic_propose(dataset_name="shop", k=3, seed=7)
    assert sorted(p["stratum"] for p in proposed) == ["account", "billing", "billing"]
    email = TrafficQuestion.objects.get(text="Can I change my email address?")
    assert {"traffic_id": email.pk, "qid": f"traffic-{email.pk}", "stratum": "account",
            "question": "Can I change my email address?"} in proposed  # fmt: skip
    record = next(i["record"] for i in working_records(dataset) if i["qid"] == f"traffic-{email.pk}")
    assert record == {
        "qid": f"traffic-{email.pk}",
        "question": "Can I change my email address?",
        "stratum": "account",
        "origin": "traffic",
        "traffic_id": email.pk,
    }
    assert TrafficQuestion.objects.get(pk=email.pk).proposed_qid == f"traffic-{email.pk}"
    item = next(i for i in tagging_list(dataset) if i.qid == f"traffic-{email.pk}")
    assert (item.state, item.record["origin"]) == ("untagged", "traffic")


def test_the_same_seed_draws_the_same_questions(tmp_path):
    classified_world(tmp_path)
    with pytest.raises(Rollback), transaction.atomic():
        first = traffic_propose(dataset_name="shop", k=2, seed=11)
        raise Rollback
    assert WorkingExample.objects.count() == 0
    assert traffic_propose(dataset_name="shop", k=2, seed=11) == first


def test_re_running_never_adds_one_twice(tmp_path):
    classified_world(tmp_path)
    first = traffic_propose(dataset_name="shop", k=3, seed=1)
    rest = traffic_propose(dataset_name="shop", k=10, seed=1)
    assert len(first) + len(rest) == 5
    assert {p["traffic_id"] for p in first}.isdisjoint({p["traffic_id"] for p in rest})
    assert traffic_propose(dataset_name="shop", k=10, seed=1) == []
    assert WorkingExample.objects.count() == 5


def test_a_question_already_in_the_working_copy_is_not_proposed(tmp_path):
    classified_world(tmp_path)
    working_edit(
        dataset_name="shop", qid="n1", base_revision=0,
        changes={"qid": "n1", "question": "do you ship to norway", "stratum": "other"},
    )  # fmt: skip
    proposed = traffic_propose(dataset_name="shop", k=10, seed=0)
    assert sorted(p["question"] for p in proposed) == [
        "Can I change my email address?",
        "Refund please",
        "What is the refund window",
        "Why was my card charged twice?",
    ]


@pytest.mark.parametrize("k, seed, message", [(0, 0, "field 'propose': must be from 1 to 1000000, not 0"),
                                              (2, -1, "field 'seed': must be from 0 to 4294967295, not -1")])  # fmt: skip
def test_a_bad_k_or_seed_adds_nothing(tmp_path, k, seed, message):
    classified_world(tmp_path)
    with pytest.raises(ServiceError) as caught:
        traffic_propose(dataset_name="shop", k=k, seed=seed)
    assert [str(p) for p in caught.value.problems] == [message]
    assert (WorkingExample.objects.count(), EditAudit.objects.count()) == (0, 0)
    assert set(TrafficQuestion.objects.values_list("proposed_qid", flat=True)) == {""}
