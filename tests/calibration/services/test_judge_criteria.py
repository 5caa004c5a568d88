"""A judge version that scores dataset criteria beside its verdict: created with --criterion, its values
imported for the replay backend (checked by line), calibrated by the engine against the final human values
(weighted kappa, alpha, bootstrap, baseline per criterion, equal to scikit-learn and krippendorff), and
gated per criterion."""

import json

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.services.criteria import criterion_set
from annotation.services.label_import import labels_import
from calibration.models import CalibrationRun, CalibrationSample, ImportedVerdict, JudgeVersion, Measurement, Verdict
from calibration.selectors.gates import judge_gate
from calibration.services.judges import config_hash, judge_version_create
from tests.calibration.world import human_verdict
from tests.conftest import run_cmd, write_jsonl

SCALE = list("12345")


def human_faith(i: int) -> str:
    return SCALE[i % 5]


def judge_faith(i: int) -> str:
    return SCALE[min(4, i % 5 + 1)] if i % 4 == 0 else human_faith(i)


def human_tone(i: int) -> str:
    return "kind" if i % 2 else "neutral"


def judge_tone(i: int) -> str:
    return "rude" if i % 5 == 0 else human_tone(i)


@pytest.fixture
def rated(world, tmp_path):
    """`support` defines faithfulness (ordinal 1-5, pass >= 4) and tone (categorical); both annotators give
    every answer both, and differ on faithfulness where i % 7 == 0 (disputed: no final value)."""
    criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=SCALE, pass_rule=">=4")
    criterion_set(dataset_name="support", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
    lines = []
    for i in range(60):
        for who in ("ann-a", "ann-b"):
            faith = human_faith(i) if who == "ann-a" or i % 7 else SCALE[(i + 2) % 5]
            base = {"run_id": "run-a", "qid": f"q-{i:04d}", "annotator": who, "labelled_at": "2026-06-09T10:00:00Z"}
            lines.append({**base, "criterion": "faithfulness", "value": faith})
            lines.append({**base, "criterion": "tone", "value": human_tone(i)})
    labels_import(path=write_jsonl(tmp_path / "criteria.jsonl", lines))
    return world


def verdict_lines(skip_tone=(5,)):
    rows = []
    for i in range(60):
        base: dict[str, object] = {"run_id": "run-a", "qid": f"q-{i:04d}"}
        rows.append({**base, "verdict": human_verdict(i)})
        rows.append({**base, "criterion": "faithfulness", "value": int(judge_faith(i))})
        if i not in skip_tone:
            rows.append({**base, "criterion": "tone", "value": judge_tone(i)})
    return rows


def replay_version(judge="external", *criteria):
    code, out, err = run_cmd(
        "create_judge_version",
        "--judge",
        judge,
        "--backend",
        "replay",
        "--min-n",
        "10",
        *[a for c in criteria for a in ("--criterion", c)],
        "--json",
    )
    assert code == 0, err
    return JudgeVersion.objects.get(pk=json.loads(out)["judge_version"])


def test_criteria_are_in_the_hash_only_when_given_and_their_thresholds_are_gate_settings(db):
    plain, _ = judge_version_create(judge_name="j", backend="replay")
    assert plain.criteria == []
    assert plain.config_hash == config_hash(backend="replay", model="", prompt_template="", params={}, rubric="")
    scored = replay_version("j", "tone", "faithfulness=0.6")
    assert scored.number == 2 and scored.config_hash != plain.config_hash
    assert scored.criteria == [{"name": "faithfulness", "threshold": 0.6}, {"name": "tone", "threshold": None}]
    again = replay_version("j", "faithfulness=0.8", "tone")
    assert again.pk == scored.pk and JudgeVersion.objects.count() == 2
    assert again.criteria == [{"name": "faithfulness", "threshold": 0.8}, {"name": "tone", "threshold": None}]


@pytest.mark.parametrize(
    "options, message",
    [
        (["Bad Name"], "'Bad Name' must be lower-case letters"),
        (["tone", "tone=0.5"], "'tone' given twice"),
        (["tone=2"], "'tone': threshold must be a kappa from -1 to 1, not 2.0"),
        (["tone=high"], "'tone': threshold must be a kappa from -1 to 1, not 'high'"),
    ],
)
def test_bad_criterion_options_are_refused_and_nothing_is_written(db, options, message):
    code, out, _ = run_cmd(
        "create_judge_version",
        "--judge",
        "j",
        "--backend",
        "replay",
        *[a for o in options for a in ("--criterion", o)],
        "--json",
    )
    assert code == 2
    problems = json.loads(out)["problems"]
    assert [p["field"] for p in problems] == ["criterion"] and problems[0]["message"].startswith(message)
    assert JudgeVersion.objects.count() == 0


def test_an_unknown_criterion_is_refused_at_calibration_or_for_a_judge_that_knows_its_dataset(rated):
    version = replay_version("external", "faithfulness", "relevance")
    code, out, _ = run_cmd("calibrate", str(version.pk), "--dataset", "support", "--sample", "10", "--json")
    assert code == 2
    assert json.loads(out)["problems"] == [
        {
            "line": None,
            "field": "criterion",
            "message": "dataset 'support' has no criterion 'relevance' (it has: faithfulness, tone; define it with "
            "set_criterion)",
        }
    ]
    assert CalibrationSample.objects.count() == 0 and CalibrationRun.objects.count() == 0
    known = replay_version("external", "tone")
    run_cmd("calibrate", str(known.pk), "--dataset", "support", "--sample", "10", "--json")
    assert CalibrationSample.objects.count() == 1
    code, out, _ = run_cmd("create_judge_version", "--judge", "external", "--backend", "span", "--criterion", "depth")
    assert code == 2 and JudgeVersion.objects.count() == 2


def test_criterion_verdict_lines_are_checked_by_line_and_nothing_is_written(rated, tmp_path):
    version = replay_version("external", "faithfulness")
    bad = [
        {"run_id": "run-a", "qid": "q-0001", "verdict": "correct"},  # good, but the file is refused whole
        {"run_id": "run-a", "qid": "q-0001", "criterion": "faithfulness", "value": 6},
        {"run_id": "run-a", "qid": "q-0001", "criterion": "tone", "value": "kind"},
        {"run_id": "run-a", "qid": "q-0002", "criterion": "faithfulness", "value": "3", "verdict": "correct"},
        {"run_id": "run-a", "qid": "q-0003", "criterion": "faithfulness", "value": True},
        {"run_id": "run-a", "qid": "q-0004", "criterion": "faithfulness", "value": "4"},
        {"run_id": "run-a", "qid": "q-0004", "criterion": "faithfulness", "value": "5"},
    ]
    code, out, _ = run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "bad.jsonl", bad)), "--judge-version", str(version.pk), "--json"
    )
    assert code == 2
    assert [(p["line"], p["field"], p["message"]) for p in json.loads(out)["problems"]] == [
        (3, "criterion", f"judge version {version.pk} does not score 'tone' (it scores: faithfulness)"),
        (4, "verdict", "a line gives either a verdict or a criterion and its value, not both"),
        (5, "value", "must be a value of the criterion (a string or a whole number), not True"),
        (7, "qid", "a second verdict for run-a/q-0004 on 'faithfulness' (first on line 6)"),
        (2, "value", "'6' is not a value of 'faithfulness': one of 1, 2, 3, 4, 5"),
    ]
    assert ImportedVerdict.objects.count() == 0
    good = bad[:1] + bad[5:6]
    code, out, _ = run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "ok.jsonl", good)), "--judge-version", str(version.pk), "--json"
    )
    assert (code, json.loads(out)["created"]) == (0, 2)
    changed = [{"run_id": "run-a", "qid": "q-0004", "criterion": "faithfulness", "value": 5}]
    code, out, _ = run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "c.jsonl", changed)), "--judge-version", str(version.pk), "--json"
    )
    assert code == 2 and json.loads(out)["problems"][0]["field"] == "value"
    assert sorted(ImportedVerdict.objects.values_list("qid", "criterion", "verdict", "value")) == [
        ("q-0001", "", "correct", ""),
        ("q-0004", "faithfulness", "", "4"),
    ]


def test_replay_calibration_measures_and_gates_each_criterion(rated, tmp_path, run_inline):
    version = replay_version("external", "faithfulness=0.5", "tone")
    code, out, err = run_cmd(
        "import_verdicts",
        str(write_jsonl(tmp_path / "v.jsonl", verdict_lines())),
        "--judge-version",
        str(version.pk),
        "--json",
    )
    assert code == 0, err
    assert json.loads(out) == {"judge_version": version.pk, "verdicts": 179, "created": 179, "unchanged": 0}
    run = run_inline(version, size=60)
    assert run.status == "done"
    values = dict(Verdict.objects.filter(run=run).values_list("item__answer__qid", "values"))
    assert values["q-0005"] == {"faithfulness": "1", "tone": "invalid"}
    assert values["q-0004"] == {"faithfulness": "5", "tone": "neutral"}

    m = Measurement.objects.get(run=run)
    faith, tone = m.criteria["faithfulness"], m.criteria["tone"]
    agreed = [i for i in range(60) if i % 7]
    h, j = [human_faith(i) for i in agreed], [judge_faith(i) for i in agreed]
    assert (faith["n"], faith["excluded"], faith["invalid"], faith["weights"]) == (51, 9, 0, "quadratic")
    assert faith["kappa"] == pytest.approx(cohen_kappa_score(h, j, labels=SCALE, weights="quadratic"), abs=1e-12)
    ranks = np.array([[SCALE.index(x) for x in h], [SCALE.index(x) for x in j]], dtype=float)
    assert faith["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=ranks, level_of_measurement="ordinal", value_domain=range(5)), abs=1e-12
    )
    assert faith["kappa_ci95"][0] < faith["kappa"] < faith["kappa_ci95"][1]
    # Always answering the humans' most common value: 4, on 11 of the 51 (the others 10 each).
    assert faith["baseline"] == {
        "value": "4",
        "raw_agreement": 11 / 51,
        "weighted_agreement": pytest.approx(1 - sum(((SCALE.index(x) - 3) / 4) ** 2 for x in h) / 51, abs=1e-12),
        "kappa": 0.0,
    }
    assert faith["confusion"]["4/5"] == sum(1 for i in agreed if human_faith(i) == "4" and i % 4 == 0)
    assert set(faith["per_stratum"]) == {"policy_lookup", "numeric", "howto"}
    assert sum(s["n"] for s in faith["per_stratum"].values()) == 51

    assert (tone["n"], tone["excluded"], tone["invalid"], tone["weights"]) == (60, 0, 1, "none")
    assert tone["confusion"] == {
        "rude/rude": 0,
        "rude/neutral": 0,
        "rude/kind": 0,
        "rude/invalid": 0,
        "neutral/rude": 6,
        "neutral/neutral": 24,
        "neutral/kind": 0,
        "neutral/invalid": 0,
        "kind/rude": 5,
        "kind/neutral": 0,
        "kind/kind": 24,
        "kind/invalid": 1,
    }
    # The invalid value counts as a disagreement: the kappa of the folded table, the worst it could be.
    assert tone["kappa"] == pytest.approx(
        min(
            cohen_kappa_score(
                [human_tone(i) for i in range(60)],
                [judge_tone(i) if i != 5 else other for i in range(60)],
                labels=["rude", "neutral", "kind"],
            )
            for other in ("rude", "neutral")
        ),
        abs=1e-12,
    )

    gate = judge_gate(version)
    assert gate["status"] == "pass" and gate["kappa"] == 1.0
    assert gate["criteria"] == {
        "faithfulness": {
            "n": 51,
            "kappa": faith["kappa"],
            "weights": "quadratic",
            "alpha": faith["alpha"],
            "kappa_ci95": faith["kappa_ci95"],
            "raw_agreement": faith["raw_agreement"],
            "baseline": faith["baseline"],
            "confusion": faith["confusion"],
            "per_stratum": faith["per_stratum"],
            "invalid": faith["invalid"],
            "threshold": 0.5,
            "status": "pass",
            "reasons": gate["criteria"]["faithfulness"]["reasons"],
            "stale_items": 0,
        },
        "tone": {
            "n": 60,
            "kappa": tone["kappa"],
            "weights": "none",
            "alpha": tone["alpha"],
            "kappa_ci95": tone["kappa_ci95"],
            "raw_agreement": tone["raw_agreement"],
            "baseline": tone["baseline"],
            "confusion": tone["confusion"],
            "per_stratum": tone["per_stratum"],
            "invalid": tone["invalid"],
            "threshold": None,
            "status": "ungated",
            "reasons": ["no threshold: reported, not gated"],
            "stale_items": 0,
        },
    }
    # A threshold the criterion misses fails the whole gate, naming it; the verdict's own gate still passes.
    replay_version("external", "faithfulness=0.99", "tone")
    strict = judge_gate(JudgeVersion.objects.get(pk=version.pk))
    assert strict["status"] == "fail" and strict["criteria"]["faithfulness"]["status"] == "fail"
    assert strict["reasons"][-1].startswith("criterion 'faithfulness': n 51 >= minimum 10; kappa ")


def _relabel(tmp_path, name, criterion, rows):
    lines = [
        {"run_id": "run-a", "qid": qid, "annotator": "ann-a", "criterion": criterion, "value": value}
        for qid, value in rows
    ]
    labels_import(path=write_jsonl(tmp_path / name, lines), replace=True, reason="second look")


def test_a_criterion_value_changed_under_the_sample_makes_that_criterion_and_a_gate_on_it_stale(
    rated, tmp_path, run_inline
):
    version = replay_version("external", "faithfulness=0.5", "tone")
    code, _out, err = run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "v.jsonl", verdict_lines())), "--judge-version", str(version.pk)
    )
    assert code == 0, err
    assert run_inline(version, size=60).status == "done"
    before = judge_gate(version)
    assert (before["status"], before["criteria"]["tone"]["stale_items"]) == ("pass", 0)

    # An ungated criterion's change marks that criterion only: the gate does not decide on it.
    _relabel(tmp_path, "tone.jsonl", "tone", [("q-0001", "rude"), ("q-0003", "rude")])
    gate = judge_gate(version)
    assert gate["status"] == "pass"
    tone = gate["criteria"]["tone"]
    assert (tone["status"], tone["stale_items"]) == ("stale", 2)
    assert tone["reasons"][0] == "2 answer(s) in the sample had a tone value written or settled after the measurement"
    assert (gate["criteria"]["faithfulness"]["status"], gate["criteria"]["faithfulness"]["stale_items"]) == ("pass", 0)
    assert gate["kappa"] == before["kappa"] and tone["kappa"] == before["criteria"]["tone"]["kappa"]

    # A gated criterion's change makes the whole gate stale, naming it; `judge_gate` exits 3.
    _relabel(tmp_path, "faith.jsonl", "faithfulness", [("q-0001", "5")])
    gate = judge_gate(version)
    faith = gate["criteria"]["faithfulness"]
    assert (gate["status"], faith["status"], faith["stale_items"]) == ("stale", "stale", 1)
    assert gate["stale_items"] == 0  # the verdicts did not change
    assert (
        "criterion 'faithfulness': 1 answer(s) in the sample had a faithfulness value written or settled after "
        "the measurement"
    ) in " | ".join(gate["reasons"])
    code, _out, _err = run_cmd("judge_gate", str(version.pk), "--json")
    assert code == 3

    # A new measurement reads the labels as they are now: fresh again.
    assert run_inline(version, size=60).status == "done"
    again = judge_gate(version)
    assert again["status"] in ("pass", "fail")
    assert again["criteria"]["faithfulness"]["stale_items"] == 0 and again["criteria"]["tone"]["stale_items"] == 0


def test_a_version_without_criteria_gates_as_before_with_an_empty_criteria_object(world, tmp_path, run_inline):
    version, _ = judge_version_create(judge_name="external", backend="replay", min_n=10)
    rows = [{"run_id": "run-a", "qid": f"q-{i:04d}", "verdict": human_verdict(i)} for i in range(60)]
    run_cmd("import_verdicts", str(write_jsonl(tmp_path / "v.jsonl", rows)), "--judge-version", str(version.pk))
    run = run_inline(version, size=30)
    assert Measurement.objects.get(run=run).criteria == {}
    assert list(Verdict.objects.filter(run=run).values_list("values", flat=True)) == [{}] * 30
    gate = judge_gate(version)
    assert gate["criteria"] == {} and gate["status"] == "pass"


def calibrated(tmp_path, run_inline, *criteria):
    version = replay_version("external", *criteria)
    run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "v.jsonl", verdict_lines())), "--judge-version", str(version.pk)
    )
    run_inline(version, size=60)
    return version


def test_the_api_creates_a_version_with_criteria_and_refuses_a_bad_one(rated, api_client_for):
    api = api_client_for("eng", "engineer")
    ok = api.post(
        "/api/judge-versions/",
        {"judge": "external", "backend": "replay", "criteria": [{"name": "faithfulness", "threshold": 0.5}]},
        format="json",
    )
    assert ok.status_code == 201
    version = JudgeVersion.objects.get(pk=ok.json()["judge_version"])
    assert version.criteria == [{"name": "faithfulness", "threshold": 0.5}]
    detail = api.get(f"/api/judge-versions/{version.pk}/").json()
    assert detail["criteria"] == [{"name": "faithfulness", "threshold": 0.5}]
    assert detail["gate"]["criteria"]["faithfulness"]["status"] == "unmeasured"
    bad = api.post(
        "/api/judge-versions/",
        {"judge": "other", "backend": "replay", "criteria": [{"name": "x y"}, {"name": "tone", "threshold": 5}]},
        format="json",
    )
    assert bad.status_code == 400 and JudgeVersion.objects.count() == 1
    assert "criteria" in bad.json()["problems"][0]["field"]


def test_a_blind_viewer_sees_the_criteria_status_but_none_of_their_figures(rated, tmp_path, run_inline, api_client_for):
    from annotation.services.queues import queue_create

    version = calibrated(tmp_path, run_inline, "faithfulness=0.5", "tone")
    api = api_client_for("eng-ann", "engineer", "annotator")
    assert api.get(f"/api/judge-versions/{version.pk}/gate/").json()["criteria"]["tone"]["kappa"] is not None
    queue_create(name="blind", annotators=["eng-ann", "ann-a"], run_id="run-a", overlap=2)
    gate = api.get(f"/api/judge-versions/{version.pk}/gate/").json()
    assert gate["blind"] is True
    assert gate["criteria"]["faithfulness"] == {
        "n": 51,
        "kappa": None,
        "weights": "quadratic",
        "alpha": None,
        "kappa_ci95": None,
        "raw_agreement": None,
        "baseline": None,
        "confusion": {},
        "per_stratum": {},
        "invalid": None,
        "threshold": 0.5,
        "status": "pass",
        "reasons": [],
        "stale_items": None,
    }


def test_a_grading_keeps_each_answers_criterion_values(rated, tmp_path, run_inline, django_capture_on_commit_callbacks):
    from calibration import tasks
    from calibration.models import GradedAnswer
    from calibration.services.grading import grading_start

    version = calibrated(tmp_path, run_inline, "faithfulness", "tone")
    with django_capture_on_commit_callbacks(execute=False):
        grading = grading_start(judge_version_id=version.pk, run_id="run-a", chunk_size=60)
    ids = sorted(version.runs.get().sample.items.values_list("answer_id", flat=True))
    assert len(ids) == 60
    tasks.grade_chunk.apply(args=(grading.pk, ids), throw=True)
    values = dict(GradedAnswer.objects.filter(grading=grading).values_list("answer__qid", "values"))
    assert len(values) == 60
    assert values["q-0005"] == {"faithfulness": "1", "tone": "invalid"}
    assert values["q-0004"] == {"faithfulness": "5", "tone": "neutral"}


def test_an_openai_judge_scores_criteria_through_the_engine(rated, run_inline, judge_server):
    judge_server.reject_formats = {"json_schema"}
    version, _ = judge_version_create(
        judge_name="llm",
        backend="openai",
        model="judge-1",
        min_n=10,
        params={"base_url": judge_server.url, "concurrency": 1},
        criteria=[{"name": "tone", "threshold": 0.5}],
    )
    run = run_inline(version, size=60)
    assert run.status == "done"
    rows = list(Verdict.objects.filter(run=run).values_list("item__answer__qid", "values", "response_format"))
    assert {fmt for _q, _v, fmt in rows} == {"json_object"}
    assert all(values == {"tone": "kind" if int(qid[2:]) % 3 else "rude"} for qid, values, _f in rows)
    tone = Measurement.objects.get(run=run).criteria["tone"]
    assert (tone["n"], tone["invalid"], tone["confusion"]["kind/kind"], tone["confusion"]["neutral/rude"]) == (
        60,
        0,
        sum(1 for i in range(60) if i % 2 and i % 3),
        sum(1 for i in range(60) if i % 2 == 0 and i % 3 == 0),
    )
    assert judge_gate(version)["criteria"]["tone"]["status"] == "fail"
    assert judge_gate(version)["status"] == "fail"


def test_the_pages_create_a_version_with_criteria_and_show_each_criterion(
    rated, tmp_path, run_inline, client, make_user
):
    make_user("eng", "engineer", password="pw-xxxxxxxx")
    client.login(username="eng", password="pw-xxxxxxxx")
    made = client.post("/judges/new/", {"judge": "external", "backend": "replay", "criteria": "faithfulness=0.5, tone"})
    assert made.status_code == 302
    version = JudgeVersion.objects.get()
    assert version.criteria == [{"name": "faithfulness", "threshold": 0.5}, {"name": "tone", "threshold": None}]
    page = client.get(f"/judges/versions/{version.pk}/").content.decode()
    assert 'data-testid="criterion-faithfulness"' in page and "not measured yet" in page
    refused = client.post("/judges/new/", {"judge": "other", "backend": "replay", "criteria": "tone=7"})
    assert refused.status_code == 400 and JudgeVersion.objects.count() == 1
    assert "threshold must be a kappa from -1 to 1, not 7.0" in refused.content.decode()
    copied = client.get(f"/judges/new/?judge=external&version={version.pk}").content.decode()
    assert 'value="faithfulness=0.5, tone"' in copied

    run_cmd(
        "import_verdicts", str(write_jsonl(tmp_path / "v.jsonl", verdict_lines())), "--judge-version", str(version.pk)
    )
    run_inline(version, size=60)
    gate = judge_gate(version)["criteria"]
    page = client.get(f"/judges/versions/{version.pk}/").content.decode()
    row = page[page.index('data-testid="criterion-faithfulness"') : page.index('data-testid="criterion-tone"')]
    assert f"{gate['faithfulness']['kappa']:.3f}" in row and "(quadratic)" in row and ">pass<" in row
    assert f"{gate['faithfulness']['alpha']:.3f}" in row and "always 4: agreement 0.216, kappa 0.000" in row
    tone = page[page.index('data-testid="criterion-tone"') :]
    assert "not gated" in tone[: tone.index("</tr>")] and ">ungated<" in tone[: tone.index("</tr>")]


def test_judge_gate_prints_each_criterion_and_exits_by_the_whole_gate(rated, tmp_path, run_inline):
    version = calibrated(tmp_path, run_inline, "faithfulness=0.99", "tone")
    gate = judge_gate(version)
    code, out, err = run_cmd("judge_gate", str(version.pk))
    assert code == 1  # the verdict passes; faithfulness misses its threshold
    out += err
    faith = gate["criteria"]["faithfulness"]
    lo, hi = faith["kappa_ci95"]
    assert (
        f"criterion faithfulness: FAIL  n 51  kappa {faith['kappa']:.3f} (quadratic)  95% CI [{lo:.3f}, {hi:.3f}]"
        f"  alpha {faith['alpha']:.3f}  threshold 0.99"
    ) in out.splitlines()
    assert any(
        line.startswith("criterion tone: UNGATED  n 60  kappa ") and line.endswith("not gated")
        for line in out.splitlines()
    )
    code, out, _ = run_cmd("judge_gate", str(version.pk), "--json")
    assert code == 1 and json.loads(out)["criteria"] == gate["criteria"]


def test_figures_with_no_final_human_value_or_only_invalid_judge_values_are_undefined_not_errors(db):
    from calibration.services.criterion_measurement import criterion_figures
    from evalstats.criteria import definition

    rule = definition("faithfulness", "ordinal", SCALE, ">=4")
    none = criterion_figures(rule, [(None, "3", "s", 1)], seed=0, iters=100, min_n=5)
    assert (none["n"], none["excluded"], none["kappa"], none["kappa_ci95"], none["alpha"], none["baseline"]) == (
        0,
        1,
        None,
        None,
        None,
        None,
    )
    invalid = criterion_figures(rule, [("3", "invalid", "s", 1), ("4", "9", "t", 2)], seed=0, iters=100, min_n=5)
    assert (invalid["n"], invalid["invalid"], invalid["alpha"]) == (2, 2, None)
    assert invalid["confusion"]["3/invalid"] == 1 and invalid["confusion"]["4/invalid"] == 1
    assert invalid["raw_agreement"] == 0.0


def test_under_the_lower_bound_policy_a_criterion_passes_on_its_bootstrap_lower_bound(rated, tmp_path, run_inline):
    from calibration.models import Judge

    version = calibrated(tmp_path, run_inline, "faithfulness", "tone")
    faith = judge_gate(version)["criteria"]["faithfulness"]
    between = round((faith["kappa"] + faith["kappa_ci95"][0]) / 2, 4)
    replay_version("external", f"faithfulness={between}", "tone")
    assert judge_gate(version)["criteria"]["faithfulness"]["status"] == "pass"
    Judge.objects.filter(name="external").update(policy="lower_bound")
    lower = judge_gate(version)
    assert lower["criteria"]["faithfulness"]["status"] == "fail" and lower["status"] == "fail"
    assert lower["criteria"]["faithfulness"]["reasons"][-1].startswith("lower 95% bound of kappa (bootstrap) ")
