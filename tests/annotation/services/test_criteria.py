"""A dataset's criteria: defined by command or API, versioned (never edited), refused with the field named."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Criterion
from annotation.services.criteria import criterion_set
from evalapp.errors import ServiceError
from tests.conftest import run_cmd
from tests.factories import DatasetFactory


def test_a_change_is_the_next_version_and_the_old_one_stays(db):
    DatasetFactory.create(name="support")
    first, s1 = criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=list("12345"))
    again, s2 = criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=list("12345"))
    ruled, s3 = criterion_set(
        dataset_name="support", name="faithfulness", kind="ordinal", values=list("12345"), pass_rule=">=4"
    )
    assert (s1, s2, s3) == ("created", "unchanged", "new version")
    assert again.pk == first.pk and (first.number, ruled.number) == (1, 2)
    assert list(
        Criterion.objects.filter(name="faithfulness").order_by("number").values_list("number", "pass_rule", "values")
    ) == [(1, "", ["1", "2", "3", "4", "5"]), (2, ">=4", ["1", "2", "3", "4", "5"])]


def test_a_bad_definition_writes_nothing_and_names_the_field(db):
    DatasetFactory.create(name="support")
    criterion_set(dataset_name="support", name="relevance", kind="ordinal", values=["poor", "fair", "good"])
    with pytest.raises(ServiceError) as exc:
        criterion_set(
            dataset_name="support", name="relevance", kind="ordinal", values=["poor", "good"], pass_rule=">=fair"
        )
    assert exc.value.code == 2
    assert [(p.field, p.message) for p in exc.value.problems] == [
        ("pass", "'fair' is not one of the values (poor, good)")
    ]
    assert list(Criterion.objects.values_list("name", "number", "values")) == [
        ("relevance", 1, ["poor", "fair", "good"])
    ]


def test_set_criterion_and_criteria_commands(db):
    DatasetFactory.create(name="support")
    code, out, _ = run_cmd(
        "set_criterion", "--dataset", "support", "faithfulness", "--kind", "ordinal", "--values", "1,2,3,4,5",
        "--pass", ">=4", "--json",
    )  # fmt: skip
    made = json.loads(out)
    assert code == 0
    assert {k: made[k] for k in ("dataset", "criterion", "version", "kind", "values", "pass", "passing", "status")} == {
        "dataset": "support",
        "criterion": "faithfulness",
        "version": 1,
        "kind": "ordinal",
        "values": ["1", "2", "3", "4", "5"],
        "pass": ">=4",
        "passing": ["4", "5"],
        "status": "created",
    }
    code, _, err = run_cmd("set_criterion", "--dataset", "support", "tone", "--kind", "categorical", "--values", "a")
    assert code == 2 and "values" in err and "at least two values" in err
    code, _, err = run_cmd("set_criterion", "--dataset", "nowhere", "tone", "--kind", "binary")
    assert code != 0 and "unknown dataset 'nowhere'" in err
    assert run_cmd("set_criterion", "--dataset", "support", "verdict", "--kind", "binary")[0] == 0
    run_cmd("set_criterion", "--dataset", "support", "faithfulness", "--kind", "ordinal", "--values", "1,2,3,4,5")
    code, out, _ = run_cmd("criteria", "--dataset", "support", "--json")
    listed = json.loads(out)["criteria"]
    assert [(c["criterion"], c["version"], c["pass"]) for c in listed] == [
        ("faithfulness", 2, None),
        ("verdict", 1, None),
    ]
    code, out, _ = run_cmd("criteria", "--dataset", "support", "--all", "--json")
    assert [(c["criterion"], c["version"]) for c in json.loads(out)["criteria"]] == [
        ("faithfulness", 1),
        ("faithfulness", 2),
        ("verdict", 1),
    ]
    assert Criterion.objects.count() == 3


def test_the_api_defines_and_lists_criteria_for_curators_only(db, api_client_for):
    DatasetFactory.create(name="support")
    engineer = api_client_for("eng", "engineer")
    body = {"criterion": "quality", "kind": "ordinal", "values": ["poor", "fair", "good"], "pass_rule": "> poor"}
    made = engineer.post("/api/datasets/support/criteria/", body, format="json")
    assert made.status_code == 201, made.content
    assert (made.json()["version"], made.json()["passing"], made.json()["status"]) == (1, ["fair", "good"], "created")
    same = engineer.post("/api/datasets/support/criteria/", body, format="json")
    assert (same.status_code, same.json()["status"]) == (200, "unchanged")
    bad = engineer.post("/api/datasets/support/criteria/", {**body, "pass_rule": ">= great"}, format="json")
    assert bad.status_code == 400 and "great" in json.dumps(bad.json())
    adjudicator = api_client_for("adj", "adjudicator")
    assert (
        adjudicator.post("/api/datasets/support/criteria/", {**body, "values": ["a", "b"]}, format="json").status_code
        == 403
    )
    listed = adjudicator.get("/api/datasets/support/criteria/")
    assert listed.status_code == 200
    assert [(c["criterion"], c["version"], c["pass_rule"]) for c in listed.json()] == [("quality", 1, "> poor")]
    annotator = api_client_for("ann", "annotator")
    assert annotator.get("/api/datasets/support/criteria/").status_code == 403
    assert Criterion.objects.count() == 1


def test_a_guideline_is_part_of_the_definition_and_reaches_the_labelling_page(db, api_client_for, make_run):
    run_id = make_run(1)
    guide = "5: every claim is in the passage.\n1: none is."
    code, out, _ = run_cmd(
        "set_criterion", "--dataset", "support-q", "faithfulness", "--kind", "ordinal", "--values", "1,2,3,4,5",
        "--guideline", guide, "--json",
    )  # fmt: skip
    assert (code, json.loads(out)["guideline"], json.loads(out)["status"]) == (0, guide, "created")
    again = ("set_criterion", "--dataset", "support-q", "faithfulness", "--kind", "ordinal", "--values", "1,2,3,4,5")
    assert json.loads(run_cmd(*again, "--guideline", guide, "--json")[1])["status"] == "unchanged"
    changed = json.loads(run_cmd(*again, "--guideline", guide + " 3: half.", "--json")[1])
    assert (changed["status"], changed["version"]) == ("new version", 2)
    too_long = api_client_for("eng", "engineer").post(
        "/api/datasets/support-q/criteria/",
        {"criterion": "faithfulness", "kind": "ordinal", "values": list("12345"), "guideline": "x" * 10_001},
        format="json",
    )
    assert (too_long.status_code, Criterion.objects.count()) == (400, 2)

    eng = api_client_for("eng2", "engineer")
    ann = api_client_for("ann", "annotator")
    made = eng.post(
        "/api/queues/",
        {"name": "g", "run_id": run_id, "overlap": 1, "annotators": ["ann"], "criteria": ["faithfulness"]},
        format="json",
    )
    queue = made.json()["id"]
    payload = ann.post(f"/api/queues/{queue}/next/").json()
    assert [(c["version"], c["guideline"]) for c in payload["criteria"]] == [(2, guide + " 3: half.")]
    page = Client()
    page.force_login(get_user_model().objects.get(username="ann"))
    html = page.get(f"/queues/{queue}/label/").content.decode()
    assert (
        '<p class="guideline" data-testid="guideline-faithfulness">5: every claim is in the passage.<br>1: none is. 3: half.</p>'
        in html
    )
