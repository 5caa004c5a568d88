"""Every verdict records the model the server says it ran; another model served since the calibration makes
the gate stale. The judge is tests/judge_server.py on a real socket."""

import pytest

from calibration import tasks
from calibration.models import GradedAnswer, ImportedVerdict, Verdict
from calibration.selectors.gates import judge_gate
from calibration.selectors.served_models import served_model_history
from calibration.services.grading import grading_pending_answer_ids, grading_start
from calibration.services.judges import judge_version_create
from calibration.services.verdicts import verdicts_import
from evalapp.errors import ServiceError
from tests.calibration.world import human_verdict
from tests.conftest import write_jsonl

OLD, NEW = "judge-1-2026-05", "judge-1-2026-07"


def _version(server):
    return judge_version_create(
        judge_name="llm", backend="openai", model="judge-1", min_n=5, params={"base_url": server.url}
    )[0]


def _grade(version, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        grading = grading_start(judge_version_id=version.pk, run_id="run-a", force=True, reason="drift test")
    tasks.grade_chunk.apply(args=(grading.pk, grading_pending_answer_ids(grading)), throw=True)
    return grading


def test_each_verdict_records_the_served_model_and_fingerprint(world, judge_server, run_inline):
    judge_server.served_model, judge_server.system_fingerprint = OLD, "fp_a"
    version = _version(judge_server)
    run = run_inline(version, size=30)
    assert set(Verdict.objects.filter(run=run).values_list("served_model", "system_fingerprint")) == {(OLD, "fp_a")}
    served = judge_gate(version)["served_model"]
    assert served == {
        "calibrated": [{"served_model": OLD, "system_fingerprint": "fp_a", "n": 30}],
        "latest": None,
        "changed": False,
        "reason": None,
        "warning": None,
    }


def test_a_server_that_switches_models_after_calibration_makes_the_gate_stale(
    world, judge_server, run_inline, django_capture_on_commit_callbacks
):
    judge_server.served_model, judge_server.system_fingerprint = OLD, "fp_a"
    version = _version(judge_server)
    run_inline(version, size=30)
    before = judge_gate(version)
    assert before["status"] != "stale"
    # Five answers of the grading still come from the old model, then the provider moves the name.
    judge_server.switch_after = judge_server.completions + 5
    judge_server.switch_model, judge_server.switch_fingerprint = NEW, "fp_b"
    grading = _grade(version, django_capture_on_commit_callbacks)
    assert GradedAnswer.objects.filter(grading=grading, served_model=NEW, system_fingerprint="fp_b").count() == 55
    gate = judge_gate(version)
    assert gate["status"] == "stale"
    assert gate["reasons"][0] == (
        f"the server now reports {NEW} (fingerprint fp_b) (grading run {grading.pk}); "
        f"calibrated on {OLD} (fingerprint fp_a); recalibrate"
    )
    assert gate["served_model"]["latest"] == {
        "served_model": NEW,
        "system_fingerprint": "fp_b",
        "kind": "grading",
        "run": grading.pk,
    }
    history = served_model_history(version)
    assert [(h["served_model"], h["system_fingerprint"], h["n"]) for h in history] == [
        (OLD, "fp_a", 35),
        (NEW, "fp_b", 60 - 5),
    ]
    assert history[0]["first_seen"] <= history[1]["first_seen"]


def test_only_a_new_fingerprint_is_a_change_too_but_a_missing_one_is_not(
    world, judge_server, run_inline, django_capture_on_commit_callbacks
):
    judge_server.served_model, judge_server.system_fingerprint = OLD, "fp_a"
    version = _version(judge_server)
    run_inline(version, size=30)
    judge_server.system_fingerprint = None  # the server stops reporting one: not evidence of a change
    _grade(version, django_capture_on_commit_callbacks)
    assert judge_gate(version)["served_model"]["changed"] is False
    judge_server.system_fingerprint = "fp_c"
    grading = _grade(version, django_capture_on_commit_callbacks)
    gate = judge_gate(version)
    assert gate["status"] == "stale"
    assert gate["reasons"][0] == (
        f"the server now reports {OLD} (fingerprint fp_c) (grading run {grading.pk}); "
        f"calibrated on {OLD} (fingerprint fp_a); recalibrate"
    )


def test_a_calibration_served_by_two_models_says_so(world, judge_server, run_inline):
    judge_server.served_model, judge_server.system_fingerprint = OLD, "fp_a"
    judge_server.switch_after, judge_server.switch_model, judge_server.switch_fingerprint = 10, NEW, "fp_b"
    version = _version(judge_server)
    run_inline(version, size=30)
    gate = judge_gate(version)
    warning = (
        f"the measured calibration run was served by 2 models: {OLD} (fingerprint fp_a) on 10 item(s), "
        f"{NEW} (fingerprint fp_b) on 20 item(s); its figures mix them"
    )
    assert gate["served_model"]["warning"] == warning
    assert warning in gate["warnings"]


def test_a_replay_judge_carries_the_served_model_of_its_imported_lines(world, run_inline, tmp_path):
    version = judge_version_create(judge_name="replayed", backend="replay", min_n=5)[0]
    lines = [
        {
            "run_id": "run-a",
            "qid": f"q-{i:04d}",
            "verdict": human_verdict(i),
            **({"served_model": OLD, "system_fingerprint": "fp_a"} if i % 2 == 0 else {}),
        }
        for i in range(60)
    ]
    verdicts_import(path=write_jsonl(tmp_path / "v.jsonl", lines), judge_version_id=version.pk)
    run = run_inline(version, size=60)
    got = dict(
        Verdict.objects.filter(run=run).values_list("item__answer__qid", "served_model").order_by("item__answer__qid")
    )
    assert got == {f"q-{i:04d}": (OLD if i % 2 == 0 else "") for i in range(60)}


def test_an_imported_served_model_that_is_not_text_is_refused_and_nothing_written(world, tmp_path):
    version = judge_version_create(judge_name="replayed", backend="replay", min_n=5)[0]
    lines = [
        {"run_id": "run-a", "qid": "q-0000", "verdict": "correct"},
        {"run_id": "run-a", "qid": "q-0001", "verdict": "correct", "served_model": 7},
    ]
    with pytest.raises(ServiceError) as refused:
        verdicts_import(path=write_jsonl(tmp_path / "v.jsonl", lines), judge_version_id=version.pk)
    assert [(p.line, p.field, p.message) for p in refused.value.problems] == [
        (2, "served_model", "served_model must be text of at most 200 characters")
    ]
    assert ImportedVerdict.objects.count() == 0


def test_the_version_page_shows_the_served_models_and_the_change(
    world, judge_server, run_inline, django_capture_on_commit_callbacks, client, make_user
):
    judge_server.served_model, judge_server.system_fingerprint = OLD, "fp_a"
    version = _version(judge_server)
    run_inline(version, size=30)
    judge_server.served_model, judge_server.system_fingerprint = NEW, "fp_b"
    grading = _grade(version, django_capture_on_commit_callbacks)
    client.force_login(make_user("eng", "engineer"))
    page = client.get(f"/judges/versions/{version.pk}/").content.decode()
    rows = page.split('data-testid="served-models"')[1].split("</table>")[0]
    assert rows.count("<tr>") == 3  # the header, then oldest first
    assert rows.index(OLD) < rows.index(NEW)
    assert "<td>30</td>" in rows and "<td>60</td>" in rows
    assert (
        f"the server now reports {NEW} (fingerprint fp_b) (grading run {grading.pk}); "
        f"calibrated on {OLD} (fingerprint fp_a); recalibrate"
    ) in page
