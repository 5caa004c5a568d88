"""LangSmith: dataset examples as a labelled set, experiment runs as a system run, feedback as labels.

Every record here is built with the langsmith SDK's own schema classes (`langsmith.schemas.Example`,
`Run`, `Feedback`, `FeedbackSourceBase`) and dumped with pydantic's `model_dump_json()`, one a line, as
`client.list_examples()` / `list_runs()` / `list_feedback()` give them.
"""

import datetime as dt
import json
import uuid

import pytest

from annotation.models import Answer, Dataset, DatasetVersion, Example, Run
from annotation.selectors.datasets import latest_version, version_records
from annotation.selectors.labels import labels_for_export
from tests.annotation.bridges.conftest import label_counts
from tests.conftest import run_cmd

schemas = pytest.importorskip("langsmith.schemas")

T = dt.datetime(2026, 5, 20, 10, 0, tzinfo=dt.UTC)
DATASET_ID = uuid.UUID(int=100)
SESSION_ID = uuid.UUID(int=200)


def uid(n: int) -> uuid.UUID:
    return uuid.UUID(int=n)


def example(n, inputs, outputs=None, metadata=None):
    return schemas.Example(
        id=uid(n), dataset_id=DATASET_ID, inputs=inputs, outputs=outputs, metadata=metadata, created_at=T
    )


EXAMPLES = [
    example(1, {"question": "How long is the trial?", "lang": "en"}, {"answer": "30 days"},
            {"qid": "q-a", "stratum": "policy", "gold_text": "Trials run 30 days.", "team": "support"}),
    example(2, {"question": "Can I pause billing?"}, {"answer": "no", "why": "policy 4"}, {"stratum": "how_to"}),
    example(3, {"question": "Who signs the DPA?"}),
]  # fmt: skip


def write_lines(path, rows):
    path.write_text("".join((r if isinstance(r, str) else r.model_dump_json()) + "\n" for r in rows), "utf-8")
    return path


def test_examples_become_question_records(db, tmp_path):
    path = write_lines(tmp_path / "examples.jsonl", EXAMPLES)
    code, out, err = run_cmd(
        "import_questions", str(path), "--format", "langsmith", "--dataset", "ls-set", "--stratum-default", "policy",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert (body["examples"], body["added"], body["format"]) == (3, 3, "langsmith")
    assert body["not_mapped"] == [
        "attachments", "created_at", "dataset_id", "inputs.lang", "metadata.team", "modified_at", "outputs.why",
        "source_run_id",
    ]  # fmt: skip
    version = latest_version(Dataset.objects.get(name="ls-set"))
    assert version is not None
    records = {qid: json.loads(text) for qid, text in version_records(version)}
    assert records == {
        "q-a": {"qid": "q-a", "question": "How long is the trial?", "expected": "30 days", "stratum": "policy",
                "gold_text": "Trials run 30 days.", "langsmith_example_id": str(uid(1))},
        str(uid(2)): {"qid": str(uid(2)), "question": "Can I pause billing?", "expected": "no", "stratum": "how_to",
                      "langsmith_example_id": str(uid(2))},
        str(uid(3)): {"qid": str(uid(3)), "question": "Who signs the DPA?", "stratum": "policy",
                      "langsmith_example_id": str(uid(3))},
    }  # fmt: skip


def test_the_keys_options_pick_other_inputs_and_metadata_keys(db, tmp_path):
    rows = [
        example(7, {"q": "Is SSO included?", "question": "not this"}, {"gold": "yes"}, {"id": "q-7", "kind": "how_to"})
    ]
    path = write_lines(tmp_path / "examples.jsonl", rows)
    code, out, err = run_cmd(
        "import_questions", str(path), "--format", "langsmith", "--dataset", "ls-keys", "--question-key", "q",
        "--expected-key", "gold", "--qid-key", "id", "--stratum-key", "kind", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert "inputs.question" in json.loads(out)["not_mapped"]
    version = latest_version(Dataset.objects.get(name="ls-keys"))
    assert version is not None
    assert [json.loads(text) for _qid, text in version_records(version)] == [
        {"qid": "q-7", "question": "Is SSO included?", "expected": "yes", "stratum": "how_to",
         "langsmith_example_id": str(uid(7))},
    ]  # fmt: skip


def test_a_missing_stratum_question_or_a_duplicate_qid_is_refused_by_line_and_field(db, tmp_path):
    counts = (Dataset.objects.count(), DatasetVersion.objects.count(), Example.objects.count())
    path = write_lines(tmp_path / "examples.jsonl", [*EXAMPLES, example(4, {"prompt": "?"}, None, {"stratum": "x"})])
    code, out, _err = run_cmd("import_questions", str(path), "--format", "langsmith", "--dataset", "ls-set", "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": 3, "field": "metadata.stratum",
         "message": "missing: the example's metadata names no stratum; give --stratum-default"},
        {"line": 4, "field": "inputs.question", "message": "missing: the example's question (a string)"},
    ]  # fmt: skip
    twice = example(9, {"question": "Again?"}, None, {"qid": "q-a", "stratum": "policy"})
    path = write_lines(tmp_path / "examples2.jsonl", [*EXAMPLES, twice])
    code, out, _err = run_cmd(
        "import_questions", str(path), "--format", "langsmith", "--dataset", "ls-set", "--stratum-default", "policy",
        "--json",
    )  # fmt: skip
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": 4, "field": "metadata.qid", "message": "duplicate qid 'q-a' (first on line 1)"},
    ]
    assert (Dataset.objects.count(), DatasetVersion.objects.count(), Example.objects.count()) == counts


def feedback(n, run, key, score=None, value=None, source="app", user="ann1", comment=None):
    return schemas.Feedback(
        id=uid(900 + n), run_id=run, trace_id=run, key=key, score=score, value=value, comment=comment,
        created_at=T, modified_at=T,
        feedback_source=schemas.FeedbackSourceBase(type=source, user_id=uid(700 + n), user_name=user),
    )  # fmt: skip


def run_line(n, example_id, outputs, feedbacks=(), parent=None):
    run = schemas.Run(
        id=uid(500 + n), name="target", start_time=T, run_type="chain", trace_id=uid(500 + (parent or n)),
        inputs={"question": "…"}, outputs=outputs, reference_example_id=example_id, session_id=SESSION_ID,
        parent_run_id=uid(500 + parent) if parent else None,
    )  # fmt: skip
    line = json.loads(run.model_dump_json())
    if feedbacks:
        line["feedback"] = [json.loads(f.model_dump_json()) for f in feedbacks]
    return json.dumps(line)


@pytest.fixture
def ls_questions(db, tmp_path):
    path = write_lines(tmp_path / "examples.jsonl", EXAMPLES)
    assert run_cmd("import_questions", str(path), "--format", "langsmith", "--dataset", "ls-set",
                   "--stratum-default", "policy")[0] == 0  # fmt: skip


def test_experiment_runs_become_a_system_run(ls_questions, tmp_path):
    path = write_lines(
        tmp_path / "runs.jsonl",
        [
            run_line(1, uid(1), {"answer": "A month.", "contexts": ["Trials run 30 days."], "tokens": 12},
                     [feedback(1, uid(501), "correct", score=1), feedback(2, uid(501), "helpfulness", score=0.5)]),
            run_line(2, uid(2), {"output": "No, it cannot be paused."}, [feedback(3, uid(502), "correct", score=0)]),
            run_line(3, uid(3), {"answer": "Legal signs it."}),
            run_line(4, uid(3), {"answer": "a retriever step"}, parent=3),
        ],
    )  # fmt: skip
    code, out, err = run_cmd(
        "import_run", str(path), "--format", "langsmith", "--dataset", "ls-set", "--run-id", "ls-run",
        "--system", "rag-v2", "--record", "model_snapshot=qwen2.5-7b", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert (body["run_id"], body["answers"], body["dataset"], body["format"]) == ("ls-run", 3, "ls-set", "langsmith")
    assert "child runs (parent_run_id set: only an experiment's root runs are answers)" in body["not_mapped"]
    assert {"outputs.tokens", "inputs", "run_type", "feedback[].comment"} <= set(body["not_mapped"])
    run = Run.objects.get(run_id="ls-run")
    assert (run.system, run.model_snapshot, run.started_at) == ("rag-v2", "qwen2.5-7b", T)
    assert run.record["langsmith_session_id"] == str(SESSION_ID)
    answers = list(Answer.objects.filter(run=run).order_by("qid").values_list("qid", "answer", "correct", "extra"))
    assert answers == [
        (str(uid(2)), "No, it cannot be paused.", False,
         {"langsmith_run_id": str(uid(502)), "langsmith_trace_id": str(uid(502)), "langsmith_feedback": {"correct": 0}}),
        (str(uid(3)), "Legal signs it.", None,
         {"langsmith_run_id": str(uid(503)), "langsmith_trace_id": str(uid(503))}),
        ("q-a", "A month.", True,
         {"contexts": ["Trials run 30 days."], "langsmith_run_id": str(uid(501)), "langsmith_trace_id": str(uid(501)),
          "langsmith_feedback": {"correct": 1, "helpfulness": 0.5}}),
    ]  # fmt: skip


def test_a_run_without_an_answer_or_an_example_is_refused_by_line(ls_questions, tmp_path):
    path = write_lines(
        tmp_path / "runs.jsonl", [run_line(1, uid(1), {"tokens": 3}), run_line(2, None, {"answer": "x"})]
    )
    before = (Run.objects.count(), Answer.objects.count())
    args = ("--format", "langsmith", "--dataset", "ls-set", "--run-id", "ls-run", "--system", "rag-v2", "--json")
    code, out, _err = run_cmd("import_run", str(path), *args)
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": 1, "field": "outputs.answer", "message": "missing: the run's answer (a string)"},
        {"line": 2, "field": "reference_example_id", "message": "missing: the run names no dataset example"},
    ]
    path = write_lines(tmp_path / "runs2.jsonl", [run_line(1, uid(42), {"answer": "x"})])
    code, out, _err = run_cmd("import_run", str(path), *args)
    assert code == 2
    [problem] = json.loads(out)["problems"]
    assert (problem["line"], problem["field"]) == (1, "reference_example_id")
    assert problem["message"].startswith(f"qid '{uid(42)}' is not in dataset version sha256:")
    assert (Run.objects.count(), Answer.objects.count()) == before


@pytest.fixture
def ls_run(ls_questions, tmp_path, make_user):
    make_user("ann1", "annotator")
    rows = [run_line(n, uid(n), {"answer": f"answer {n}"}) for n in (1, 2, 3)]
    code, _out, err = run_cmd(
        "import_run", str(write_lines(tmp_path / "runs.jsonl", rows)), "--format", "langsmith", "--dataset", "ls-set",
        "--run-id", "ls-run", "--system", "rag-v2",
    )  # fmt: skip
    assert code == 0, err
    return "ls-run"


def test_feedback_becomes_labels(ls_run, tmp_path):
    rows = [
        feedback(1, uid(501), "correct", score=1, comment="matches the page"),
        feedback(2, uid(502), "correct", value="incorrect", user="Bo Smith"),
        feedback(3, uid(503), "correct", score=0, source="model"),
        feedback(4, uid(503), "helpfulness", score=0.5),
    ]
    code, out, err = run_cmd(
        "import_labels", str(write_lines(tmp_path / "fb.jsonl", rows)), "--format", "langsmith", "--run", ls_run,
        "--annotator", "Bo Smith=ann2", "--json",
    )  # fmt: skip
    assert code == 0, err
    body = json.loads(out)
    assert (body["labels"], body["created"], body["users_created"]) == (2, 2, ["ann2"])
    assert body["not_mapped"] == [
        "comparative_experiment_id", "correction", "extra", "feedback from source 'model' (left out: a human label "
        "is a person's)", "feedback with key 'helpfulness' (not --feedback-key 'correct')", "feedback_group_id",
        "feedback_source.metadata", "id", "modified_at", "session_id", "start_time",
    ]  # fmt: skip
    labels = [{k: v for k, v in r.items() if k != "source"} for r in labels_for_export(run_id=ls_run)]
    assert labels == [
        {"run_id": ls_run, "qid": str(uid(2)), "annotator": "ann2", "verdict": "incorrect",
         "labelled_at": "2026-05-20T10:00:00Z", "rationale": ""},
        {"run_id": ls_run, "qid": "q-a", "annotator": "ann1", "verdict": "correct",
         "labelled_at": "2026-05-20T10:00:00Z", "rationale": "matches the page"},
    ]  # fmt: skip


def test_feedback_off_the_run_or_off_the_verdicts_is_refused_by_line_and_field(ls_run, tmp_path):
    before = label_counts()
    rows = [feedback(1, uid(599), "correct", score=1), feedback(2, uid(502), "verdict", value="maybe")]
    path = write_lines(tmp_path / "fb.jsonl", rows)
    code, out, _err = run_cmd(
        "import_labels", str(path), "--format", "langsmith", "--run", ls_run, "--feedback-key", "verdict", "--json"
    )
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": 2, "field": "value", "message": "verdict must be 'correct' or 'incorrect', not 'maybe'"},
    ]
    code, out, _err = run_cmd("import_labels", str(path), "--format", "langsmith", "--run", ls_run, "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {"line": 1, "field": "run_id", "message": f"run 'ls-run' has no answer from LangSmith run '{uid(599)}'"},
    ]
    assert label_counts() == before
