"""Importing traffic (dedup against the set and earlier traffic), rules (precedence, re-applied, never over
a manual assignment) and manual assignment; every refusal writes nothing."""

import json

import pytest

from annotation.models import TrafficQuestion, TrafficRule
from annotation.services.traffic import traffic_assign, traffic_import, traffic_rule_add
from evalapp.errors import ServiceError
from tests.annotation.traffic_world import traffic_world
from tests.conftest import write_jsonl

pytestmark = pytest.mark.django_db


def strata():
    return {q.text: (q.stratum, q.stratum_source) for q in TrafficQuestion.objects.order_by("id")}


def test_import_dedups_against_the_set_and_within_the_traffic(tmp_path):
    _dataset, path = traffic_world(tmp_path)
    result = traffic_import(path=path, dataset_name="shop", source="search-box")
    assert (result.lines, result.added, result.repeats, result.in_set) == (10, 7, 2, 1)
    assert (result.classified, result.unclassified) == (0, 7)
    refund = TrafficQuestion.objects.get(normalized_text="refund please")
    assert (refund.text, refund.count, refund.source) == ("Refund please", 3, "search-box")
    assert refund.asked_at is not None and refund.last_asked_at is not None
    assert refund.asked_at.isoformat() == "2026-10-30T10:00:00+00:00"
    assert refund.last_asked_at.isoformat() == "2026-11-02T10:00:00+00:00"
    assert json.loads(refund.metadata) == {"channel": "web"}
    # A key outside question/asked_at/source/metadata joins the metadata; a line's own source wins.
    assert json.loads(TrafficQuestion.objects.get(text="Is there a student discount?").metadata) == {"channel": "app"}
    assert TrafficQuestion.objects.get(text="What is the refund window").source == "tickets"
    assert TrafficQuestion.objects.get(text="What is the refund window").asked_at is None
    assert not TrafficQuestion.objects.filter(normalized_text="where is my invoice").exists()


def test_a_second_import_adds_to_the_counts_and_stores_nothing_twice(tmp_path):
    traffic_world(tmp_path)
    traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    again = traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    assert (again.added, again.repeats, again.in_set) == (0, 9, 1)
    assert TrafficQuestion.objects.count() == 7
    assert TrafficQuestion.objects.get(normalized_text="refund please").count == 6
    assert sum(TrafficQuestion.objects.values_list("count", flat=True)) == 18


def test_rules_precedence_highest_priority_then_oldest(tmp_path):
    traffic_world(tmp_path)
    traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    first = traffic_rule_add(dataset_name="shop", stratum="billing", kind="keyword", pattern="REFUND")
    assert first.reclassified == 2
    # Same priority, younger: the older keyword rule keeps "refund please".
    traffic_rule_add(dataset_name="shop", stratum="other", kind="regex", pattern=r"(?i)refund|ship")
    assert strata()["Refund please"] == ("billing", "rule")
    assert strata()["Do you ship to Norway?"] == ("other", "rule")
    # A higher priority takes over, on rows rule-assigned before.
    high = traffic_rule_add(dataset_name="shop", stratum="account", kind="metadata", pattern="channel=web", priority=5)
    assert high.reclassified == 1
    assert strata()["Refund please"] == ("account", "rule")
    assert TrafficQuestion.objects.get(text="Refund please").rule_id == high.rule.pk
    assert strata()["What is the refund window"] == ("billing", "rule")
    assert strata()["hello"] == (None, "none")


def test_keyword_matches_whole_words_only(tmp_path):
    traffic_world(tmp_path)
    traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    traffic_rule_add(dataset_name="shop", stratum="other", kind="keyword", pattern="hell")
    traffic_rule_add(dataset_name="shop", stratum="account", kind="keyword", pattern="email address")
    assert strata()["hello"] == (None, "none")
    assert strata()["Can I change my email address?"] == ("account", "rule")


def test_new_imports_are_classified_by_the_rules(tmp_path):
    traffic_world(tmp_path)
    traffic_rule_add(dataset_name="shop", stratum="billing", kind="regex", pattern=r"charged|refund")
    result = traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    # A regex is searched in the text as first asked, case and all: "Refund please" is not matched.
    assert (result.classified, result.unclassified) == (2, 5)
    assert TrafficQuestion.objects.get(text="Why was my card charged twice?").stratum == "billing"


def test_a_manual_assignment_is_never_overridden_by_a_rule(tmp_path):
    traffic_world(tmp_path)
    traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    hello = TrafficQuestion.objects.get(text="hello")
    refund = TrafficQuestion.objects.get(text="Refund please")
    assert traffic_assign(dataset_name="shop", ids=[hello.pk, refund.pk], stratum="other") == 2
    traffic_rule_add(dataset_name="shop", stratum="billing", kind="keyword", pattern="refund", priority=100)
    traffic_rule_add(dataset_name="shop", stratum="account", kind="regex", pattern=".", priority=100)
    assert strata()["hello"] == ("other", "manual")
    assert strata()["Refund please"] == ("other", "manual")
    assert strata()["What is the refund window"] == ("billing", "rule")


def snapshot():
    return (
        list(TrafficQuestion.objects.order_by("id").values_list("text", "count", "stratum", "stratum_source")),
        list(TrafficRule.objects.values_list("id", "pattern")),
    )


@pytest.mark.parametrize(
    "line, message",
    [
        ({"asked_at": "2026-11-01T09:00:00Z"}, "line 2, field 'question': missing required key"),
        ({"question": "   "}, "line 2, field 'question': must be a non-empty string"),
        ({"question": "?!"}, "line 2, field 'question': has no words, only punctuation"),
        (
            {"question": "q", "asked_at": "yesterday"},
            "line 2, field 'asked_at': not an ISO 8601 date-time: 'yesterday'",
        ),
        ({"question": "q", "metadata": ["web"]}, "line 2, field 'metadata': must be a JSON object"),
        ({"question": "q", "source": 3}, "line 2, field 'source': must be a string"),
        ("[1]", "line 2: each line must be a JSON object, not an array"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_written(tmp_path, line, message):
    traffic_world(tmp_path)
    traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    before = snapshot()
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"question": "Refund please"}, line, {"question": "new one"}])
    with pytest.raises(ServiceError) as caught:
        traffic_import(path=bad, dataset_name="shop")
    assert [str(p) for p in caught.value.problems] == [message]
    assert caught.value.code == 2
    assert snapshot() == before


@pytest.mark.parametrize(
    "kind, pattern, stratum, message",
    [
        (
            "regex",
            "(unclosed",
            "billing",
            "field 'regex': not a valid regular expression: missing ), unterminated subpattern at position 0",
        ),
        ("metadata", "channel", "billing", "field 'metadata': 'channel' is not key=value"),
        ("metadata", "=web", "billing", "field 'metadata': '=web' is not key=value"),
        ("keyword", "...", "billing", "field 'keyword': has no words, only punctuation"),
        (
            "keyword",
            "refund",
            "shipping",
            "field 'stratum': stratum 'shipping' is outside the dataset's budget (account, billing, other)",
        ),
    ],
)
def test_a_bad_rule_is_refused_and_nothing_changes(tmp_path, kind, pattern, stratum, message):
    traffic_world(tmp_path)
    traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    before = snapshot()
    with pytest.raises(ServiceError) as caught:
        traffic_rule_add(dataset_name="shop", stratum=stratum, kind=kind, pattern=pattern)
    assert [str(p) for p in caught.value.problems] == [message]
    assert snapshot() == before


def test_assigning_an_unknown_id_changes_nothing(tmp_path):
    traffic_world(tmp_path)
    traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="shop")
    hello = TrafficQuestion.objects.get(text="hello")
    before = snapshot()
    with pytest.raises(ServiceError) as caught:
        traffic_assign(dataset_name="shop", ids=[hello.pk, 99999], stratum="other")
    assert [str(p) for p in caught.value.problems] == ["field 'ids': unknown id(s): 99999"]
    with pytest.raises(ServiceError):
        traffic_assign(dataset_name="shop", ids=[hello.pk], stratum="nope")
    assert snapshot() == before


def test_an_unknown_dataset_is_not_found(tmp_path):
    traffic_world(tmp_path)
    with pytest.raises(ServiceError) as caught:
        traffic_import(path=tmp_path / "traffic.jsonl", dataset_name="nope")
    assert (str(caught.value), caught.value.status) == ("unknown dataset 'nope'", 404)
    assert TrafficQuestion.objects.count() == 0


def test_a_long_question_is_deduplicated_too(tmp_path):
    # 9,999 characters: beyond what PostgreSQL could index as a btree key, so uniqueness rests on a hash.
    long = ("why " * 2500)[:9999]
    traffic_world(tmp_path)
    path = write_jsonl(tmp_path / "long.jsonl", [{"question": long}, {"question": long.upper()}])
    assert traffic_import(path=path, dataset_name="shop").added == 1
    assert TrafficQuestion.objects.get().count == 2
