"""A 1-5 faithfulness rubric end to end, on whichever database the suite runs on (CI runs both): defined,
labelled blind by two annotators in a queue with a tolerance, its disputes settled by an adjudicator, a
replay judge calibrated on it and gated per criterion, and two systems compared on it.

The answers carry what the annotators will give (``[[ann1|ann2|verdict]]``), because the annotators see
neither the run nor the qid: the test reads the answer, as a person reads it."""

import json
import re

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.models import Answer
from annotation.selectors.criterion_finals import criterion_finals
from calibration import tasks
from calibration.models import JudgeVersion, Verdict
from calibration.selectors.gates import judge_gate
from calibration.services.calibration import calibration_start, pending_item_ids
from evalstats.paired_scores import paired_mean_diff
from tests.conftest import run_cmd, write_jsonl

pytestmark = pytest.mark.django_db
SCALE = list("12345")
N = 12
# (ann1, ann2) per question and run: agreed, within the tolerance of 1 (final: the lower), or disputed.
GIVEN = {
    "A": [(4, 4), (2, 2), (3, 4), (5, 5), (1, 4), (4, 5), (3, 3), (2, 2), (5, 5), (4, 4), (2, 3), (1, 1)],
    "B": [(5, 5), (4, 4), (4, 4), (5, 5), (2, 5), (5, 5), (4, 4), (3, 3), (5, 5), (3, 4), (4, 4), (2, 2)],
}
ADJUDICATED = {("A", 4): "2", ("B", 4): "4"}  # the two disputed answers (1 vs 4, 2 vs 5)


def final(run: str, i: int) -> str:
    if (run, i) in ADJUDICATED:
        return ADJUDICATED[(run, i)]
    return str(min(GIVEN[run][i]))


def verdict(run: str, i: int) -> str:
    return "correct" if int(final(run, i)) >= 4 else "incorrect"


def judged(run: str, i: int) -> str:
    """The replay judge: the human final value, one step high on every third question of A."""
    value = int(final(run, i))
    return str(min(5, value + 1)) if run == "A" and i % 3 == 0 else str(value)


def test_a_rubric_flows_from_import_through_a_blind_queue_and_a_judge_to_a_comparison(tmp_path, api_client_for):
    questions = [
        {"qid": f"q-{i:04d}", "question": f"How long is plan {i}?", "stratum": ("policy", "howto")[i % 2],
         "expected": f"{i} days", "grading": "rubric"}
        for i in range(N)
    ]  # fmt: skip
    assert (
        run_cmd("import_questions", str(write_jsonl(tmp_path / "q.jsonl", questions)), "--dataset", "support")[0] == 0
    )
    code, out, _ = run_cmd(
        "set_criterion", "--dataset", "support", "faithfulness", "--kind", "ordinal", "--values", "1,2,3,4,5",
        "--pass", ">=4", "--json",
    )  # fmt: skip
    assert (code, json.loads(out)["status"]) == (0, "created")
    for run in ("A", "B"):
        rows = [{"run_id": run, "system": f"sys-{run.lower()}", "dataset": "support"}]
        rows += [
            {"qid": f"q-{i:04d}", "answer": f"Plan {i}: [[{a}|{b}|{verdict(run, i)}]]"}
            for i, (a, b) in enumerate(GIVEN[run])
        ]
        assert run_cmd("import_run", str(write_jsonl(tmp_path / f"{run}.jsonl", rows)))[0] == 0

    eng = api_client_for("eng", "engineer")
    adj = api_client_for("adj", "adjudicator")
    annotators = {name: api_client_for(name, "annotator") for name in ("ann1", "ann2")}
    made = eng.post(
        "/api/queues/",
        {
            "name": "faithfulness",
            "items": [{"run_id": run, "qid": f"q-{i:04d}"} for run in ("A", "B") for i in range(N)],
            "overlap": 2,
            "annotators": ["ann1", "ann2"],
            "criteria": ["faithfulness"],
            "tolerance": {"faithfulness": 1},
        },
        format="json",
    )
    assert made.status_code == 201, made.json()
    q = made.json()["id"]

    # Both annotators work the queue blind: the payload names no run, system, qid or other label.
    for k, client in enumerate(annotators.values()):
        while True:
            nxt = client.post(f"/api/queues/{q}/next/")
            if nxt.status_code == 204:
                break
            item = nxt.json()
            assert set(item) == {
                "item_id",
                "question",
                "answer",
                "gold_text",
                "expected",
                "lease_expires_at",
                "criteria",
            }
            assert not re.search(r"sys-|\bA\b|\bB\b|q-00", json.dumps({"q": item["question"], "a": item["answer"]}))
            marks = re.search(r"\[\[(\d)\|(\d)\|(\w+)\]\]", item["answer"])
            assert marks is not None
            a, b, said = marks.groups()
            label = client.post(
                f"/api/queues/{q}/items/{item['item_id']}/label/",
                {"verdict": said, "values": {"faithfulness": (a, b)[k]}},
                format="json",
            )
            assert label.status_code == 201, label.json()

    disputes = adj.get(f"/api/queues/{q}/disputes/").json()
    assert sorted(r["disputed_criteria"] for r in disputes) == [["faithfulness"], ["faithfulness"]]
    assert not any(r["verdict_disputed"] for r in disputes)
    for row in disputes:
        given = sorted(g["value"] for g in row["criteria"][0]["given"])
        settle = "2" if given == ["1", "4"] else "4"
        done = adj.post(
            f"/api/queues/{q}/items/{row['item_id']}/adjudicate/",
            {"values": {"faithfulness": settle}, "reason": "read against the passage"},
            format="json",
        )
        assert (done.status_code, done.json()["status"]) == (201, "adjudicated")
    assert adj.get(f"/api/queues/{q}/disputes/").json() == []

    ids = {(run, qid): pk for pk, run, qid in Answer.objects.values_list("id", "run__run_id", "qid")}
    finals = criterion_finals(name="faithfulness", answer_ids=ids.values())
    assert finals == {ids[(run, f"q-{i:04d}")]: final(run, i) for run in ("A", "B") for i in range(N)}
    assert dict(Answer.objects.values_list("id", "final_verdict")) == {
        ids[(run, f"q-{i:04d}")]: verdict(run, i) for run in ("A", "B") for i in range(N)
    }

    # A replay judge scores the rubric; calibrated on every labelled answer and gated on it.
    code, out, err = run_cmd(
        "create_judge_version", "--judge", "rubric-judge", "--backend", "replay", "--min-n", "10",
        "--threshold", "0.5", "--criterion", "faithfulness=0.6", "--json",
    )  # fmt: skip
    assert code == 0, err
    version_pk = json.loads(out)["judge_version"]
    lines = []
    for run in ("A", "B"):
        for i in range(N):
            lines.append({"run_id": run, "qid": f"q-{i:04d}", "verdict": verdict(run, i)})
            lines.append({"run_id": run, "qid": f"q-{i:04d}", "criterion": "faithfulness", "value": judged(run, i)})
    code, out, err = run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "v.jsonl", lines)), "--judge-version", str(version_pk)
    )
    assert code == 0, err
    version = JudgeVersion.objects.get(pk=version_pk)
    calibration, _ = calibration_start(
        judge_version_id=version.pk, dataset_name="support", size=2 * N, seed=0, chunk_size=8
    )
    pending = pending_item_ids(calibration)
    for start in range(0, len(pending), 8):
        tasks.judge_chunk.apply(args=(calibration.pk, pending[start : start + 8]), throw=True)
    calibration.refresh_from_db()
    assert calibration.status == "done"
    judged_values = dict(Verdict.objects.filter(run=calibration).values_list("item__answer_id", "values"))
    assert len(judged_values) == 2 * N

    gate = judge_gate(version)
    human = [finals[a] for a in sorted(judged_values)]
    judge = [judged_values[a]["faithfulness"] for a in sorted(judged_values)]
    faith = gate["criteria"]["faithfulness"]
    assert (faith["n"], faith["weights"], faith["threshold"]) == (24, "quadratic", 0.6)
    assert faith["kappa"] == pytest.approx(
        cohen_kappa_score(human, judge, labels=SCALE, weights="quadratic"), abs=1e-12
    )
    assert faith["status"] == "pass" and gate["status"] == "pass"

    # The two systems compared on the rubric: the paired difference of the final values.
    code, out, err = run_cmd("compare", "A", "B", "--json")
    assert code == 0, err
    compared = json.loads(out)["criteria"]["faithfulness"]
    a = np.array([int(final("A", i)) for i in range(N)])
    b = np.array([int(final("B", i)) for i in range(N)])
    expected = paired_mean_diff(a, b, iters=10_000, seed=0)
    assert (compared["n"], compared["mean_a"], compared["mean_b"]) == (N, a.mean(), b.mean())
    assert compared["diff"] == pytest.approx(b.mean() - a.mean())
    assert expected.ci95 is not None and compared["ci95"] == list(expected.ci95)
    passing = compared["pass_rule"]
    assert (passing["a_score"], passing["b_score"]) == (np.mean(a >= 4), np.mean(b >= 4))
    assert passing["regressions"] == sorted(f"q-{i:04d}" for i in range(N) if a[i] >= 4 > b[i])
