"""The traffic commands: --json objects, exit 2 naming line and field with nothing written, and the
coverage command's object (with --propose) equal to what the API answers."""

import json

import pytest

from annotation.models import TrafficQuestion, TrafficRule, WorkingExample
from tests.annotation.traffic_world import traffic_world
from tests.conftest import run_cmd, write_jsonl

pytestmark = pytest.mark.django_db


def test_the_whole_flow_from_the_command_line(tmp_path, api_client_for):
    _dataset, path = traffic_world(tmp_path)
    code, out, _ = run_cmd("import_traffic", str(path), "--dataset", "shop", "--source", "search-box", "--json")
    assert code == 0
    body = json.loads(out)
    assert {k: body[k] for k in ("dataset", "lines", "added", "repeats", "in_set")} == {
        "dataset": "shop", "lines": 10, "added": 7, "repeats": 2, "in_set": 1,
    }  # fmt: skip
    code, out, _ = run_cmd(
        "set_traffic_rule", "--dataset", "shop", "--stratum", "billing", "--regex", r"(?i)refund|charged"
    )
    assert (code, out.split(";")[1].strip()) == (0, "3 question(s) reclassified")
    run_cmd(
        "set_traffic_rule", "--dataset", "shop", "--stratum", "account", "--metadata", "channel=app", "--priority", "2"
    )
    code, out, _ = run_cmd("traffic_rules", "--dataset", "shop", "--json")
    assert [(r["kind"], r["pattern"], r["priority"]) for r in json.loads(out)["rules"]] == [
        ("metadata", "channel=app", 2), ("regex", r"(?i)refund|charged", 0),
    ]  # fmt: skip
    norway = TrafficQuestion.objects.get(text="Do you ship to Norway?")
    code, out, _ = run_cmd("assign_traffic", "--dataset", "shop", str(norway.pk), "--stratum", "other", "--json")
    assert json.loads(out) == {"dataset": "shop", "stratum": "other", "assigned": 1}
    code, out, _ = run_cmd("coverage", "--dataset", "shop", "--n", "9", "--json")
    api = api_client_for("eng", "engineer")
    assert json.loads(out) == api.get("/api/datasets/shop/coverage/?n=9").json()
    # billing 5 (refund x3, window, charged), account 2 (email, discount), other 1, unclassified 1 (hello).
    assert [(s["stratum"], s["traffic_count"]) for s in json.loads(out)["strata"]] == [
        ("account", 2), ("billing", 5), ("other", 1),
    ]  # fmt: skip
    code, out, _ = run_cmd("coverage", "--dataset", "shop", "--n", "4", "--propose", "3", "--seed", "5", "--json")
    report = json.loads(out)
    assert code == 0 and len(report["proposed"]) == 3
    assert report["warnings"][:2] == [
        "stratum 'account': 4 x 0.222222 = 0.888889 < 1, so a sample of that size rounds it to none",
        "stratum 'other': 4 x 0.111111 = 0.444444 < 1, so a sample of that size rounds it to none",
    ]
    assert WorkingExample.objects.count() == 3
    code, out, _ = run_cmd("coverage", "--dataset", "shop")
    assert out.splitlines()[0] == "shop: 9 asked, n = 3"
    assert "unclassified\t11.1% (1 asked)" in out.splitlines()


def test_a_bad_line_exits_2_naming_line_and_field_and_writes_nothing(tmp_path):
    traffic_world(tmp_path)
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"question": "ok"}, {"question": "q", "metadata": "web"}])
    code, out, err = run_cmd("import_traffic", str(bad), "--dataset", "shop", "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [{"line": 2, "field": "metadata", "message": "must be a JSON object"}]
    assert "line 2, field 'metadata': must be a JSON object" in err
    assert TrafficQuestion.objects.count() == 0


def test_a_bad_regex_exits_2_and_adds_no_rule(tmp_path):
    traffic_world(tmp_path)
    code, _out, err = run_cmd("set_traffic_rule", "--dataset", "shop", "--stratum", "billing", "--regex", "[a-")
    assert code == 2
    assert "field 'regex': not a valid regular expression" in err
    assert TrafficRule.objects.count() == 0


def test_a_negative_n_exits_2(tmp_path):
    traffic_world(tmp_path)
    code, _out, err = run_cmd("coverage", "--dataset", "shop", "--n", "-2")
    assert (code, err.strip()) == (2, "error: n must not be negative\n  field 'n': -2 is negative")
