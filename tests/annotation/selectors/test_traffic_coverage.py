"""The coverage report on the hand-built world: 9 askings (billing 5, account 1, other 1, unclassified 2),
a set of 3 (billing 2, account 1) and the budget 50/30/20, all shares worked by hand."""

import pytest

from annotation.models import TrafficQuestion
from annotation.selectors.traffic import coverage_report
from annotation.services.traffic import traffic_assign, traffic_import, traffic_rule_add
from tests.annotation.traffic_world import traffic_world

pytestmark = pytest.mark.django_db


def classified_world(tmp_path, *, budget=True):
    dataset, path = traffic_world(tmp_path, budget=budget)
    traffic_import(path=path, dataset_name="shop")
    for stratum, word in (("billing", "refund"), ("billing", "charged"), ("account", "email")):
        traffic_rule_add(dataset_name="shop", stratum=stratum, kind="keyword", pattern=word)
    norway = TrafficQuestion.objects.get(text="Do you ship to Norway?")
    traffic_assign(dataset_name="shop", ids=[norway.pk], stratum="other")
    return dataset


def test_exact_shares_and_the_rounds_to_none_warnings(tmp_path):
    dataset = classified_world(tmp_path)
    report = coverage_report(dataset, n=5)
    assert {k: report[k] for k in ("dataset", "n", "traffic_total", "traffic_questions", "unclassified")} == {
        "dataset": "shop",
        "n": 5,
        "traffic_total": 9,
        "traffic_questions": 7,
        "unclassified": {"count": 2, "share": 0.222222, "expected_in_sample": 1.111111},
    }
    assert report["strata"] == [
        {
            "stratum": "account",
            "traffic_count": 1,
            "traffic_share": 0.111111,
            "set_count": 1,
            "set_share": 0.333333,
            "budget_share": 0.3,
            "expected_in_sample": 0.555556,
            "rounds_to_none": True,
        },
        {
            "stratum": "billing",
            "traffic_count": 5,
            "traffic_share": 0.555556,
            "set_count": 2,
            "set_share": 0.666667,
            "budget_share": 0.5,
            "expected_in_sample": 2.777778,
            "rounds_to_none": False,
        },
        {
            "stratum": "other",
            "traffic_count": 1,
            "traffic_share": 0.111111,
            "set_count": 0,
            "set_share": 0.0,
            "budget_share": 0.2,
            "expected_in_sample": 0.555556,
            "rounds_to_none": True,
        },
    ]
    assert report["warnings"] == [
        "stratum 'account': 5 x 0.111111 = 0.555556 < 1, so a sample of that size rounds it to none",
        "stratum 'other': 5 x 0.111111 = 0.555556 < 1, so a sample of that size rounds it to none",
        "2 asked question(s) (0.222222 of traffic) have no stratum: add a rule or assign them",
    ]
    assert report["proposed"] == []


def test_n_defaults_to_the_set_size_and_a_big_n_rounds_nothing_to_none(tmp_path):
    dataset = classified_world(tmp_path)
    assert coverage_report(dataset)["n"] == 3
    big = coverage_report(dataset, n=9)
    assert [(s["stratum"], s["expected_in_sample"], s["rounds_to_none"]) for s in big["strata"]] == [
        ("account", 1.0, False),
        ("billing", 5.0, False),
        ("other", 1.0, False),
    ]


def test_without_a_budget_the_budget_share_is_none_and_unclassified_is_still_shown(tmp_path):
    dataset, path = traffic_world(tmp_path, budget=False)
    traffic_import(path=path, dataset_name="shop")
    report = coverage_report(dataset, n=9)
    assert report["unclassified"] == {"count": 9, "share": 1.0, "expected_in_sample": 9.0}
    assert [(s["stratum"], s["traffic_share"], s["set_share"], s["budget_share"]) for s in report["strata"]] == [
        ("account", 0.0, 0.333333, None),
        ("billing", 0.0, 0.666667, None),
    ]


def test_no_traffic_says_so(tmp_path):
    dataset, _path = traffic_world(tmp_path)
    report = coverage_report(dataset, n=5)
    assert (report["traffic_total"], report["unclassified"]["share"]) == (0, None)
    assert report["warnings"] == ["no traffic imported yet: import_traffic FILE --dataset NAME"]
    assert [s["traffic_share"] for s in report["strata"]] == [None, None, None]
