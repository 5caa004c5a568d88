"""Label Studio: its JSON export of annotated tasks imported as human labels, and a run exported as tasks
with a labelling configuration they fit, round trip included.

The tasks are built to Label Studio's published export schema, "Label Studio JSON format of annotated
tasks" (labelstud.io/guide/export.html: a JSON array of tasks, each with `data`, `annotations[]` holding
`completed_by`, `created_at`, `updated_at`, `was_cancelled`, `lead_time` and `result[]` regions of
`from_name`, `to_name`, `type`, `value`), and the configuration to its tag reference (labelstud.io/tags).
label-studio-sdk is not installed: it would replace the project's numpy and pull in opencv and nltk.
"""

import json
import xml.etree.ElementTree as ET

from annotation.models import CriterionLabel, CriterionLabelEvent, HumanLabel, LabelEvent
from annotation.selectors.labels import labels_for_export
from tests.annotation.bridges.conftest import label_counts, write_json
from tests.conftest import run_cmd, write_jsonl


def region(name, kind, value, to_name="answer", rid="r1"):
    return {"id": rid, "from_name": name, "to_name": to_name, "type": kind, "origin": "manual", "value": value}


def annotation(completed_by, result, *, at="2026-05-20T10:00:00.000000Z", cancelled=False):
    return {
        "id": 1001,
        "completed_by": completed_by,
        "result": result,
        "was_cancelled": cancelled,
        "ground_truth": False,
        "created_at": "2026-05-20T09:59:00.000000Z",
        "updated_at": at,
        "lead_time": 12.5,
        "task": 1,
        "project": 3,
    }


def task(qid, annotations, **data):
    return {
        "id": 1,
        "data": {"qid": qid, "question": "…", "answer": "…", **data},
        "annotations": annotations,
        "predictions": [],
        "meta": {},
        "created_at": "2026-05-19T08:00:00.000000Z",
        "inner_id": 1,
        "total_annotations": len(annotations),
    }


EXPORT = [
    task(
        "q1",
        [
            annotation(
                7,
                [
                    region("verdict", "choices", {"choices": ["Correct"]}),
                    region("faithfulness", "rating", {"rating": 4}, rid="r2"),
                    region("rationale", "textarea", {"text": ["cites the trial page"]}, rid="r3"),
                ],
            ),
            annotation(
                {"id": 8, "email": "b@example.com", "first_name": "B", "last_name": ""},
                [
                    region("verdict", "choices", {"choices": ["incorrect"]}),
                    region("tone", "choices", {"choices": ["kind"]}),
                ],
                at="2026-05-20T11:00:00.000000Z",
            ),
        ],
        run_id="r-bridge",
    ),
    task("q2", [annotation(7, [], cancelled=True)]),
    task("q3", [annotation(7, [region("spans", "labels", {"start": 0, "end": 4, "labels": ["claim"]})])]),
]


def test_import_maps_each_annotation_to_labels_and_lists_what_it_left_out(world, tmp_path):
    path = write_json(tmp_path / "export.json", EXPORT)
    code, out, err = run_cmd(
        "import_labels", str(path), "--format", "label-studio", "--run", world,
        "--annotator", "7=ann1", "--annotator", "b@example.com=ann2", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert {k: body[k] for k in ("labels", "created", "unchanged", "users_created", "format")} == {
        "labels": 4,
        "created": 4,
        "unchanged": 0,
        "users_created": [],
        "format": "label-studio",
    }
    assert body["not_mapped"] == [
        "annotations[] with was_cancelled true (skipped tasks)",
        "annotations[] without a verdict or criterion value",
        "annotations[].ground_truth",
        "annotations[].id",
        "annotations[].lead_time",
        "annotations[].project",
        "annotations[].result[] of type 'labels' (control 'spans')",
        "annotations[].result[].id",
        "annotations[].result[].origin",
        "annotations[].result[].to_name",
        "annotations[].result[].value.end",
        "annotations[].result[].value.labels",
        "annotations[].result[].value.start",
        "annotations[].task",
        "created_at",
        "data.answer",
        "data.question",
        "id",
        "inner_id",
        "meta",
        "predictions",
        "total_annotations",
    ]
    labels = [{k: v for k, v in r.items() if k != "source"} for r in labels_for_export(run_id=world)]
    assert labels == [
        {"run_id": world, "qid": "q1", "annotator": "ann1", "verdict": "correct",
         "labelled_at": "2026-05-20T10:00:00Z", "rationale": "cites the trial page"},
        {"run_id": world, "qid": "q1", "annotator": "ann1", "criterion": "faithfulness", "value": "4",
         "labelled_at": "2026-05-20T10:00:00Z", "rationale": ""},
        {"run_id": world, "qid": "q1", "annotator": "ann2", "verdict": "incorrect",
         "labelled_at": "2026-05-20T11:00:00Z", "rationale": ""},
        {"run_id": world, "qid": "q1", "annotator": "ann2", "criterion": "tone", "value": "kind",
         "labelled_at": "2026-05-20T11:00:00Z", "rationale": ""},
    ]  # fmt: skip


def test_refusals_name_the_item_and_field_and_write_nothing(world, tmp_path):
    bad = [
        task("q1", [annotation(7, [region("verdict", "choices", {"choices": ["maybe"]})])]),
        {"id": 2, "data": {"question": "no qid"}, "annotations": []},
        task("q2", [annotation(9, [region("verdict", "choices", {"choices": ["correct"]})])]),
        task("q3", [annotation(7, [region("tone", "choices", {"choices": ["warm"]})])], run_id="other-run"),
        task("q3", [annotation(7, [region("verdict", "choices", {"choices": ["correct", "incorrect"]})])]),
    ]
    before = label_counts()
    code, out, err = run_cmd(
        "import_labels", str(write_json(tmp_path / "bad.json", bad)), "--format", "label-studio",
        "--run", world, "--annotator", "7=ann1", "--json",
    )  # fmt: skip
    assert code == 2
    problems = [(p["item"], p["field"]) for p in json.loads(out)["problems"]]
    assert problems == [
        (1, "data.qid"),
        (2, "annotations[0].completed_by"),
        (3, "data.run_id"),
        (4, "annotations[0].result[0].value.choices"),
    ]
    assert "item 2, field 'annotations[0].completed_by': user id 9 names no annotator here" in err
    assert label_counts() == before
    # Once the file converts, the service's refusal is told at the task it came from, under its source field.
    code, out, err = run_cmd(
        "import_labels", str(write_json(tmp_path / "bad0.json", bad[:1])), "--format", "label-studio",
        "--run", world, "--annotator", "7=ann1", "--json",
    )  # fmt: skip
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"item": 0, "line": None, "field": "annotations[0].result[0].value.choices",
         "message": "verdict must be 'correct' or 'incorrect', not 'maybe'"},
    ]  # fmt: skip
    assert str(tmp_path / "bad0.json") in json.loads(out)["error"]
    assert label_counts() == before


def test_run_is_required(world, tmp_path):
    code, out, _err = run_cmd(
        "import_labels", str(write_json(tmp_path / "e.json", EXPORT)), "--format", "label-studio", "--json"
    )
    assert code == 2
    assert json.loads(out)["problems"][0]["field"] == "run"
    assert label_counts() == (0, 0, 0, 0)


def test_unknown_format_is_refused_naming_the_formats(world, tmp_path):
    code, out, _err = run_cmd("import_labels", str(tmp_path / "x.json"), "--format", "prodigy", "--json")
    assert code == 2
    assert (
        json.loads(out)["error"] == "unknown labels format 'prodigy'; one of jsonl, label-studio, langfuse, langsmith"
    )


LABELS = [
    {"run_id": "r-bridge", "qid": "q1", "annotator": "ann1", "verdict": "correct",
     "labelled_at": "2026-05-20T10:00:00Z", "rationale": "in the passage"},
    {"run_id": "r-bridge", "qid": "q1", "annotator": "ann1", "criterion": "faithfulness", "value": "5",
     "labelled_at": "2026-05-20T10:00:00Z"},
    {"run_id": "r-bridge", "qid": "q1", "annotator": "ann2", "verdict": "incorrect",
     "labelled_at": "2026-05-20T10:05:00Z"},
    {"run_id": "r-bridge", "qid": "q3", "annotator": "ann2", "criterion": "tone", "value": "neutral",
     "labelled_at": "2026-05-21T08:00:00Z"},
]  # fmt: skip


def controls(config: str) -> dict[str | None, tuple[str, str | None, list[str | None]]]:
    """name -> (tag, toName, choice values) of each control of a labelling configuration."""
    root = ET.fromstring(config)
    assert root.tag == "View"
    shown = {el.get("name") for el in root if el.tag == "Text"}
    assert shown == {"question", "answer", "expected", "gold_text"}
    found = {}
    for el in root:
        if el.tag in ("Choices", "Rating", "TextArea"):
            found[el.get("name")] = (el.tag, el.get("toName"), [c.get("value") for c in el if c.tag == "Choice"])
    return found


def test_export_writes_tasks_and_a_config_they_fit_and_importing_it_back_gives_the_same_labels(world, tmp_path):
    assert run_cmd("import_labels", str(write_jsonl(tmp_path / "l.jsonl", LABELS)))[0] == 0
    before = [{k: v for k, v in r.items() if k != "source"} for r in labels_for_export(run_id=world)]
    tasks_path, config_path = tmp_path / "tasks.json", tmp_path / "config.xml"
    code, out, err = run_cmd(
        "export_labels", "--run", world, "--format", "label-studio", "--output", str(tasks_path),
        "--config-out", str(config_path), "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == {
        "labels": 4, "tasks": 3, "annotations": 3, "output": str(tasks_path),
        "config_out": str(config_path), "format": "label-studio",
    }  # fmt: skip
    tasks = json.loads(tasks_path.read_text())
    assert [t["data"] for t in tasks] == [
        {"qid": q, "run_id": world, "question": text, "answer": f"answer to {q}", "expected": expected, "gold_text": ""}
        for q, text, expected in (
            ("q1", "How long is the trial?", "30 days"),
            ("q2", "Can I pause billing?", "no"),
            ("q3", "Who signs the DPA?", "legal"),
        )
    ]
    first = tasks[0]["annotations"][0]
    assert first["completed_by"]["username"] == "ann1"
    assert first["updated_at"] == "2026-05-20T10:00:00Z"
    assert first["result"] == [
        {"from_name": "verdict", "to_name": "answer", "type": "choices", "value": {"choices": ["correct"]}},
        {"from_name": "faithfulness", "to_name": "answer", "type": "rating", "value": {"rating": 5}},
        {"from_name": "rationale", "to_name": "answer", "type": "textarea", "value": {"text": ["in the passage"]}},
    ]
    config = controls(config_path.read_text())
    assert config == {
        "verdict": ("Choices", "answer", ["correct", "incorrect"]),
        "faithfulness": ("Rating", "answer", []),
        "tone": ("Choices", "answer", ["rude", "neutral", "kind"]),
        "rationale": ("TextArea", "answer", []),
    }
    rating = ET.fromstring(config_path.read_text()).find("Rating")
    assert rating is not None and rating.get("maxRating") == "5"
    tags = {"choices": "Choices", "rating": "Rating", "textarea": "TextArea"}
    for t in tasks:
        for a in t["annotations"]:
            for r in a["result"]:
                tag, to_name, values = config[r["from_name"]]
                assert (tags[r["type"]], r["to_name"]) == (tag, to_name)
                if r["type"] == "choices":
                    assert set(r["value"]["choices"]) <= set(values)

    # Importing the export over the same labels changes nothing ...
    code, out, err = run_cmd("import_labels", str(tasks_path), "--format", "label-studio", "--run", world, "--json")
    assert code == 0, err
    assert {k: json.loads(out)[k] for k in ("labels", "created", "unchanged")} == {
        "labels": 4,
        "created": 0,
        "unchanged": 4,
    }
    # ... and into a run without them, gives the very same labels back.
    CriterionLabelEvent.objects.all().delete()
    CriterionLabel.objects.all().delete()
    LabelEvent.objects.all().delete()
    HumanLabel.objects.all().delete()
    code, out, err = run_cmd("import_labels", str(tasks_path), "--format", "label-studio", "--run", world, "--json")
    assert code == 0, err
    assert json.loads(out)["created"] == 4
    assert json.loads(out)["not_mapped"] == [
        "annotations[].ground_truth", "annotations[].result[].to_name", "data.answer", "data.expected",
        "data.gold_text", "data.question", "predictions",
    ]  # fmt: skip
    after = [{k: v for k, v in r.items() if k != "source"} for r in labels_for_export(run_id=world)]
    assert after == before
