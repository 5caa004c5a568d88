"""Langfuse: dataset items as a labelled set, experiment items as a system run, annotation scores as
human labels.

Every file here is written by the langfuse Python SDK itself: its `langfuse.api` pydantic models (generated
from Langfuse's public OpenAPI schema) are built and serialised with `.json()`, as the API sends them.
"""

import datetime as dt
import json

import pytest

from annotation.models import Answer, Dataset, DatasetVersion, Example, Run
from annotation.selectors.datasets import latest_version, version_records
from annotation.selectors.labels import labels_for_export
from tests.annotation.bridges.conftest import label_counts
from tests.conftest import run_cmd

lf = pytest.importorskip("langfuse.api")
from langfuse.api.commons.types import (  # noqa: E402
    DatasetItem,
    ObservationLevel,
    Score_Boolean,
    Score_Categorical,
    Score_Numeric,
    ScoreSource,
)
from langfuse.api.dataset_items.types import PaginatedDatasetItems  # noqa: E402
from langfuse.api.experiments.types import Experiment, ExperimentItem  # noqa: E402
from langfuse.api.utils.pagination.types.meta_response import MetaResponse  # noqa: E402

T = dt.datetime(2026, 5, 20, 10, 0, tzinfo=dt.UTC)


def sdk_json(model) -> dict:
    return json.loads(model.json())


def dataset_item(item_id, input, expected=None, metadata=None, status="ACTIVE"):
    return DatasetItem(
        id=item_id, status=status, input=input, expected_output=expected, metadata=metadata, dataset_id="ds-1",
        dataset_name="support", created_at=T, updated_at=T, media_references=[], source_trace_id=None,
        source_observation_id=None,
    )  # fmt: skip


ITEMS = [
    dataset_item(
        "lf-item-1",
        {"question": "How long is the trial?", "context": "pricing page"},
        "30 days",
        {"qid": "q-a", "stratum": "policy", "gold_text": "Trials run 30 days.", "team": "support"},
    ),
    dataset_item("lf-item-2", "Can I pause billing?", {"answer": "no", "why": "policy 4"}, {"stratum": "how_to"}),
    dataset_item("lf-item-3", "An archived question", None, {"stratum": "policy"}, status="ARCHIVED"),
    dataset_item("lf-item-4", {"query": "Who signs the DPA?"}, None, None),
]


def write_page(path, items):
    page = PaginatedDatasetItems(data=items, meta=MetaResponse(page=1, limit=50, total_items=len(items), total_pages=1))
    path.write_text(page.json(), encoding="utf-8")
    return path


def test_dataset_items_become_question_records(db, tmp_path):
    path = write_page(tmp_path / "items.json", ITEMS)
    code, out, err = run_cmd(
        "import_questions", str(path), "--format", "langfuse", "--dataset", "lf-set",
        "--stratum-default", "policy", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert (body["examples"], body["added"], body["format"]) == (3, 3, "langfuse")
    assert body["not_mapped"] == [
        "createdAt", "datasetId", "datasetName", "expectedOutput.why", "input.context",
        "items with status ARCHIVED (left out, as Langfuse leaves them out of runs)", "mediaReferences",
        "metadata.team", "sourceObservationId", "sourceTraceId", "updatedAt",
    ]  # fmt: skip
    version = latest_version(Dataset.objects.get(name="lf-set"))
    assert version is not None
    records = {qid: json.loads(text) for qid, text in version_records(version)}
    assert records == {
        "q-a": {"qid": "q-a", "question": "How long is the trial?", "expected": "30 days", "stratum": "policy",
                "gold_text": "Trials run 30 days.", "langfuse_item_id": "lf-item-1"},
        "lf-item-2": {"qid": "lf-item-2", "question": "Can I pause billing?", "expected": "no", "stratum": "how_to",
                      "langfuse_item_id": "lf-item-2"},
        "lf-item-4": {"qid": "lf-item-4", "question": "Who signs the DPA?", "stratum": "policy",
                      "langfuse_item_id": "lf-item-4"},
    }  # fmt: skip


def test_a_missing_stratum_or_a_duplicate_qid_is_refused_by_item_and_field(db, tmp_path):
    twice = dataset_item("lf-item-9", "Again?", None, {"qid": "q-a", "stratum": "policy"})
    path = write_page(tmp_path / "items.json", [*ITEMS, twice])
    counts = (Dataset.objects.count(), DatasetVersion.objects.count(), Example.objects.count())
    code, out, _err = run_cmd("import_questions", str(path), "--format", "langfuse", "--dataset", "lf-set", "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"item": 3, "line": None, "field": "metadata.stratum",
         "message": "missing: the item's metadata names no stratum; give --stratum-default"},
    ]  # fmt: skip
    code, out, err = run_cmd(
        "import_questions", str(path), "--format", "langfuse", "--dataset", "lf-set", "--stratum-default", "policy",
        "--json",
    )  # fmt: skip
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"item": 4, "line": None, "field": "metadata.qid", "message": "duplicate qid 'q-a' (first on item 0)"},
    ]
    assert "item 4, field 'metadata.qid': duplicate qid 'q-a' (first on item 0)" in err
    assert (Dataset.objects.count(), DatasetVersion.objects.count(), Example.objects.count()) == counts


def experiment_item(n, item_id, output, scores=(), item_metadata=None):
    return ExperimentItem(
        id=f"obs-{n}", trace_id=f"trace-{n}", start_time=T, level=ObservationLevel.DEFAULT, environment="default",
        experiment_id="exp-7", experiment_name="nightly-0520", experiment_item_id=item_id, output=output,
        experiment_item_metadata=item_metadata, scores=list(scores),
    )  # fmt: skip


def v3_score(name, value, kind="BOOLEAN"):
    from langfuse.api.scores.types.score_v3 import ScoreV3_Boolean, ScoreV3_Numeric

    model = ScoreV3_Boolean if kind == "BOOLEAN" else ScoreV3_Numeric
    return model(
        id=f"s-{name}", project_id="p", name=name, source=ScoreSource.EVAL, timestamp=T, environment="default",
        created_at=T, updated_at=T, value=value,
    )  # fmt: skip


EXPERIMENT = Experiment(
    id="exp-7", name="nightly-0520", start_time=T, end_time=T, item_count=3, dataset_id="ds-1",
    metadata={"system": "rag-v2", "model_snapshot": "qwen2.5-7b@2026-05", "prompt_hash": "sha256:ab", "owner": "ml"},
)  # fmt: skip


def write_lines(path, models):
    path.write_text("".join(m.json() + "\n" for m in models), encoding="utf-8")
    return path


@pytest.fixture
def lf_questions(db, tmp_path):
    assert run_cmd("import_questions", str(write_page(tmp_path / "items.json", ITEMS)), "--format", "langfuse",
                   "--dataset", "lf-set", "--stratum-default", "policy")[0] == 0  # fmt: skip


def test_experiment_items_become_a_system_run(lf_questions, tmp_path):
    path = write_lines(
        tmp_path / "run.jsonl",
        [
            EXPERIMENT,
            # the item imported with metadata.qid q-a: found by its Langfuse item id
            experiment_item(1, "lf-item-1", {"answer": "A month.", "tokens": 12},
                            [v3_score("correct", True), v3_score("helpfulness", 0.5, "NUMERIC")]),
            experiment_item(2, "lf-item-2", "No, it cannot be paused.", [v3_score("correct", False)]),
            experiment_item(3, "other-id", "Legal signs it.", item_metadata={"qid": "lf-item-4"}),
        ],
    )  # fmt: skip
    code, out, err = run_cmd("import_run", str(path), "--format", "langfuse", "--dataset", "lf-set", "--json")
    assert code == 0, err
    body = json.loads(out)
    assert (body["run_id"], body["answers"], body["dataset"], body["format"]) == (
        "nightly-0520",
        3,
        "lf-set",
        "langfuse",
    )
    assert "metadata.owner" in body["not_mapped"] and "output.tokens" not in body["not_mapped"]
    run = Run.objects.get(run_id="nightly-0520")
    assert (run.system, run.model_snapshot, run.prompt_hash, run.started_at) == (
        "rag-v2", "qwen2.5-7b@2026-05", "sha256:ab", T,
    )  # fmt: skip
    assert run.record["langfuse_dataset_run_id"] == "exp-7"
    answers = list(Answer.objects.filter(run=run).order_by("qid").values_list("qid", "answer", "correct", "extra"))
    assert answers == [
        ("lf-item-2", "No, it cannot be paused.", False,
         {"langfuse_trace_id": "trace-2", "langfuse_scores": {"correct": False}}),
        ("lf-item-4", "Legal signs it.", None, {"langfuse_trace_id": "trace-3"}),
        ("q-a", "A month.", True,
         {"langfuse_trace_id": "trace-1", "langfuse_scores": {"correct": True, "helpfulness": 0.5}}),
    ]  # fmt: skip


def test_a_run_item_without_an_answer_or_outside_the_dataset_is_refused_by_line(lf_questions, tmp_path):
    path = write_lines(
        tmp_path / "run.jsonl",
        [EXPERIMENT, experiment_item(1, "lf-item-1", {"tokens": 3}), experiment_item(2, "unknown-item", "x")],
    )
    before = (Run.objects.count(), Answer.objects.count())
    code, out, _err = run_cmd("import_run", str(path), "--format", "langfuse", "--dataset", "lf-set", "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": 2, "field": "output",
         "message": "must be a string, or an object with one of answer, output, text, content, response"},
    ]  # fmt: skip
    path = write_lines(tmp_path / "run2.jsonl", [EXPERIMENT, experiment_item(2, "unknown-item", "x")])
    code, out, _err = run_cmd("import_run", str(path), "--format", "langfuse", "--dataset", "lf-set", "--json")
    assert code == 2
    [problem] = json.loads(out)["problems"]
    assert (problem["line"], problem["field"]) == (2, "experimentItemId")
    assert problem["message"].startswith("qid 'unknown-item' is not in dataset version sha256:")
    assert (Run.objects.count(), Answer.objects.count()) == before


@pytest.fixture
def lf_run(world, tmp_path):
    """The bridges world's run again, imported from Langfuse so its answers know their traces."""
    items = [experiment_item(n, qid, f"answer to {qid}") for n, qid in ((1, "q1"), (2, "q2"), (3, "q3"))]
    path = write_lines(tmp_path / "lf-run.jsonl", items)
    code, _out, err = run_cmd(
        "import_run", str(path), "--format", "langfuse", "--dataset", "bridge-set", "--system", "rag-v3",
        "--run-id", "lf-run",
    )  # fmt: skip
    assert code == 0, err
    return "lf-run"


def score(model, name, trace, author, **fields):
    return model(
        id=f"{name}-{trace}-{author}", trace_id=trace, name=name, source=fields.pop("source", "ANNOTATION"),
        timestamp=T, created_at=T, updated_at=T, author_user_id=author, environment="default", **fields,
    )  # fmt: skip


SCORES = [
    score(Score_Boolean, "correct", "trace-1", "u-1", value=1, string_value="True", comment="matches the page"),
    score(Score_Numeric, "faithfulness", "trace-1", "u-1", value=4.0),
    score(Score_Categorical, "tone", "trace-2", "u-2", value=0, string_value="kind"),
    score(Score_Boolean, "correct", "trace-2", "judge", value=0, string_value="False", source="EVAL"),
]


def test_annotation_scores_become_labels(lf_run, tmp_path):
    path = tmp_path / "scores.json"
    path.write_text(json.dumps([sdk_json(s) for s in SCORES]), encoding="utf-8")
    code, out, err = run_cmd(
        "import_labels", str(path), "--format", "langfuse", "--run", lf_run,
        "--annotator", "u-1=ann1", "--annotator", "u-2=ann2", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert (body["labels"], body["created"], body["users_created"]) == (3, 3, [])
    assert body["not_mapped"] == [
        "createdAt", "environment", "id", "scores with source 'EVAL' (left out: a human label is an annotation)",
        "updatedAt",
    ]  # fmt: skip
    labels = [{k: v for k, v in r.items() if k != "source"} for r in labels_for_export(run_id=lf_run)]
    assert labels == [
        {"run_id": lf_run, "qid": "q1", "annotator": "ann1", "verdict": "correct",
         "labelled_at": "2026-05-20T10:00:00Z", "rationale": "matches the page"},
        {"run_id": lf_run, "qid": "q1", "annotator": "ann1", "criterion": "faithfulness", "value": "4",
         "labelled_at": "2026-05-20T10:00:00Z", "rationale": ""},
        {"run_id": lf_run, "qid": "q2", "annotator": "ann2", "criterion": "tone", "value": "kind",
         "labelled_at": "2026-05-20T10:00:00Z", "rationale": ""},
    ]  # fmt: skip


def test_a_score_off_the_run_or_off_the_scale_is_refused_by_item_and_field(lf_run, tmp_path):
    bad = [
        score(Score_Boolean, "correct", "trace-9", "u-1", value=1, string_value="True"),
        score(Score_Categorical, "tone", "trace-2", "u-2", value=0, string_value="warm"),
    ]
    path = tmp_path / "scores.json"
    path.write_text(json.dumps([sdk_json(s) for s in bad]), encoding="utf-8")
    before = label_counts()
    code, out, _err = run_cmd("import_labels", str(path), "--format", "langfuse", "--run", lf_run, "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"item": 0, "line": None, "field": "traceId", "message": "run 'lf-run' has no answer from trace 'trace-9'"},
    ]
    path.write_text(json.dumps([sdk_json(bad[1])]), encoding="utf-8")
    code, out, _err = run_cmd("import_labels", str(path), "--format", "langfuse", "--run", lf_run, "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {
            "item": 0,
            "line": None,
            "field": "value",
            "message": "'warm' is not a value of 'tone' v1: one of rude, neutral, kind",
        },
    ]
    assert label_counts() == before
