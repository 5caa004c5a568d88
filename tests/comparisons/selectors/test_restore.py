"""The restore drill: every run's pinned references resolve, or the exact ones that do not."""

import json

import pytest

from tests import factories as f
from tests.conftest import run_cmd


def _world():
    from annotation.models import Dataset, Run
    from annotation.selectors.gold import corpus_state
    from calibration.models import GradingRun, Judge, JudgeVersion
    from calibration.services.judges import config_hash

    chunk = f.ChunkFactory(text="Passwords rotate every ninety days.")
    dataset = Dataset.objects.create(name="support")
    v1 = f.version(dataset, [f.record("q-1", gold_chunk_id=chunk.chunk_id, gold_text="ninety days")])
    judge = Judge.objects.create(name="span-judge")
    jv = JudgeVersion.objects.create(
        judge=judge,
        number=1,
        backend="span",
        prompt_template="Is it right?",
        config_hash=config_hash(backend="span", model="", prompt_template="Is it right?", params={}, rubric=""),
    )
    graded = Run.objects.create(
        run_id="run-a",
        system="rag",
        record={"run_id": "run-a"},
        dataset=dataset,
        dataset_version=v1,
        dataset_hash=v1.dataset_hash,
        model_snapshot="gpt-x-2026-01",
        index_id="idx-7",
    )
    GradingRun.objects.create(judge_version=jv, run=graded, gate_status="pass", gate={"config_hash": jv.config_hash})
    f.RunFactory(run_id="run-b", record={"run_id": "run-b", "corpus_state": corpus_state()})
    return v1, jv


@pytest.mark.django_db
def test_everything_resolves():
    _world()
    code, out, _ = run_cmd("restore_drill", "--json")
    assert code == 0
    assert json.loads(out) == {
        "runs": [
            {
                "run": "run-a",
                "ok": True,
                "problems": [],
                "resolved": ["dataset_hash", "dataset_version", "judge_version span-judge v1"],
                "external": ["model_snapshot", "index_id"],
            },
            {"run": "run-b", "ok": True, "problems": [], "resolved": ["corpus_state"], "external": []},
        ],
        "checked": 2,
        "failing": 0,
    }
    assert run_cmd("restore_drill")[1] == "2 run(s) checked, 0 with a pinned reference that does not resolve\n"


@pytest.mark.django_db
def test_a_version_hash_and_a_judge_config_that_no_longer_resolve():
    from annotation.models import DatasetVersion
    from calibration.models import JudgeVersion
    from calibration.services.judges import config_hash

    v1, jv = _world()
    pinned = v1.dataset_hash
    DatasetVersion.objects.filter(pk=v1.pk).update(dataset_hash="sha256:" + "0" * 64)
    JudgeVersion.objects.filter(pk=jv.pk).update(prompt_template="Is it right? Be strict.")
    grading = jv.gradings.get()
    code, out, _ = run_cmd("restore_drill", "--json")
    assert code == 1
    report = json.loads(out)
    assert report["checked"] == 2 and report["failing"] == 1
    assert report["runs"][0] == {
        "run": "run-a",
        "ok": False,
        "problems": [
            {"field": "dataset_hash", "value": pinned, "why": "no dataset version has this hash"},
            {
                "field": "dataset_version",
                "value": "support v1",
                "why": f"the version's hash is sha256:{'0' * 64}, the run pinned {pinned}",
            },
            {
                "field": "judge_version",
                "value": f"span-judge v1 {jv.config_hash}",
                "why": f"grading {grading.pk}: the judge version's configuration now hashes to "
                + config_hash(
                    backend="span", model="", prompt_template="Is it right? Be strict.", params={}, rubric=""
                ),
            },
        ],
        "resolved": [],
        "external": ["model_snapshot", "index_id"],
    }
    assert report["runs"][1]["ok"] is True
    code, _, err = run_cmd("restore_drill")
    assert code == 1 and err.splitlines()[0].startswith("run-a: dataset_hash " + pinned + ": no dataset version")


@pytest.mark.django_db
def test_a_manifest_edited_under_its_hash_and_a_corpus_state_never_reached():
    from annotation.models import Run, VersionEntry
    from calibration.models import JudgeVersion

    v1, jv = _world()
    VersionEntry.objects.filter(version=v1).update(qid="q-9")
    Run.objects.filter(run_id="run-b").update(record={"corpus_state": "2:999999999:0"})
    JudgeVersion.objects.filter(pk=jv.pk).update(config_hash="sha256:" + "1" * 64)
    report = json.loads(run_cmd("restore_drill", "--json")[1])
    grading = jv.gradings.get()
    a, b = report["runs"]
    assert [p["field"] for p in a["problems"]] == ["dataset_hash", "judge_version"]
    assert a["problems"][0]["why"].startswith("support v1's manifest now hashes to sha256:")
    assert a["problems"][1] == {
        "field": "judge_version",
        "value": f"span-judge v1 {jv.config_hash}",
        "why": f"grading {grading.pk} was made with this config hash; the judge version now carries sha256:{'1' * 64}",
    }
    assert b["problems"] == [
        {"field": "corpus_state", "value": "2:999999999:0", "why": "no corpus state of this name in the chunk history"}
    ]
    assert report["failing"] == 2


@pytest.mark.django_db
def test_a_record_edited_under_its_content_hash_does_not_resolve():
    from annotation.models import Example, VersionEntry

    v1, _jv = _world()
    entry = VersionEntry.objects.get(version=v1)
    stored = Example.objects.get(pk=entry.example_id).canonical
    Example.objects.filter(pk=entry.example_id).update(canonical=stored.replace("ninety days", "thirty days"))
    code, out, _ = run_cmd("restore_drill", "--json")
    assert code == 1
    a, b = json.loads(out)["runs"]
    assert a["ok"] is False and b["ok"] is True
    assert a["problems"] == [
        {
            "field": "dataset_hash",
            "value": v1.dataset_hash,
            "why": "support v1: 1 stored record no longer hashes to its sha256 (q-1)",
        }
    ]
    assert a["resolved"] == ["dataset_version", "judge_version span-judge v1"]
    # Put back, it resolves again: the check reads the stored text, nothing else.
    Example.objects.filter(pk=entry.example_id).update(canonical=stored)
    assert run_cmd("restore_drill")[0] == 0
