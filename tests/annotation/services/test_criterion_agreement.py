"""Agreement on an ordinal criterion equals the reference implementations on the same values in the
scale's own order: scikit-learn's weighted kappa and the `krippendorff` package's ordinal alpha."""

import json
import random

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.services.criteria import criterion_set
from tests.conftest import run_cmd, write_jsonl

SCALE = ["poor", "fair", "good", "great"]  # alphabetical order would be fair, good, great, poor


@pytest.fixture
def rated(tmp_path, run_file):
    run_cmd("import_run", str(run_file))
    criterion_set(dataset_name="support", name="quality", kind="ordinal", values=SCALE, pass_rule=">= good")
    rng = random.Random(3)
    lines = []
    # The run has three answers, each rated by three annotators: 3 pairs an answer, 9 in all.
    values = {}
    for qid in ("q-0001", "q-0002", "q-0003"):
        values[qid] = [rng.choice(SCALE) for _ in range(3)]
        for k, name in enumerate(("ann1", "ann2", "ann3")):
            lines.append(
                {
                    "run_id": "r1",
                    "qid": qid,
                    "annotator": name,
                    "criterion": "quality",
                    "value": values[qid][k],
                    "labelled_at": f"2026-05-20T10:0{k}:00Z",
                }
            )
    assert run_cmd("import_labels", str(write_jsonl(tmp_path / "l.jsonl", lines)))[0] == 0
    return values


@pytest.mark.django_db
def test_weighted_kappa_and_ordinal_alpha_equal_the_references(rated):
    code, out, err = run_cmd("criterion_agreement", "--run", "r1", "--criterion", "quality", "--iters", "200", "--json")
    assert code == 0, err
    got = json.loads(out)
    a, b = [], []
    for qid in sorted(rated):
        v = rated[qid]
        for i, j in ((0, 1), (0, 2), (1, 2)):
            a.append(v[i])
            b.append(v[j])
    assert (got["weights"], got["answers"], got["agreement"]["n"]) == ("quadratic", 3, 9)
    disputed = sorted(q for q in rated if len(set(rated[q])) > 1)
    assert (got["agreed"], got["disputed"], got["disputed_qids"]) == (3 - len(disputed), len(disputed), disputed)
    assert disputed  # the seed gives some
    assert got["agreement"]["kappa"] == pytest.approx(
        cohen_kappa_score(a, b, labels=SCALE, weights="quadratic"), abs=1e-12
    )
    ranks = np.array([[SCALE.index(rated[q][k]) for q in sorted(rated)] for k in range(3)], dtype=float)
    assert got["multi_rater"]["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=ranks, level_of_measurement="ordinal", value_domain=range(len(SCALE))),
        abs=1e-12,
    )
    assert got["multi_rater"]["metric"] == "ordinal"
    passes = [v in ("good", "great") for v in a], [v in ("good", "great") for v in b]
    read = (["correct" if x else "incorrect" for x in passes[0]], ["correct" if x else "incorrect" for x in passes[1]])
    assert len(set(read[0] + read[1])) == 2  # the seed gives both readings, so the kappa is defined
    assert got["pass_rule"]["kappa"] == pytest.approx(cohen_kappa_score(*read), abs=1e-12)
    assert got["pass_rule"]["n"] == 9 and got["pass_rule"]["rule"] == ">= good"
    linear = json.loads(
        run_cmd("criterion_agreement", "--run", "r1", "--criterion", "quality", "--weights", "linear", "--json")[1]
    )
    assert linear["agreement"]["kappa"] == pytest.approx(cohen_kappa_score(a, b, labels=SCALE, weights="linear"))
    assert set(got["agreement"]["per_pair"]) == {"ann1/ann2", "ann1/ann3", "ann2/ann3"}
    code, out, err = run_cmd("criterion_agreement", "--run", "r1", "--criterion", "quality", "--iters", "0")
    assert code == 0
    assert f"kappa (quadratic weights) {got['agreement']['kappa']:.3f}" in out + err


@pytest.mark.django_db
def test_weighting_a_categorical_criterion_and_an_unknown_one_are_refused(rated):
    criterion_set(dataset_name="support", name="tone", kind="categorical", values=["rude", "kind"])
    code, _, err = run_cmd("criterion_agreement", "--run", "r1", "--criterion", "tone", "--weights", "quadratic")
    assert code == 2 and "no order to weight by" in err
    code, _, err = run_cmd("criterion_agreement", "--run", "r1", "--criterion", "relevance")
    assert code != 0 and "no criterion 'relevance'" in err


@pytest.mark.django_db
def test_the_api_gives_the_commands_figures_to_engineers_only(rated, api_client_for):
    command = json.loads(run_cmd("criterion_agreement", "--run", "r1", "--criterion", "quality", "--json")[1])
    engineer = api_client_for("eng", "engineer")
    got = engineer.get("/api/runs/r1/criteria/quality/agreement/")
    assert got.status_code == 200, got.content
    assert got.json()["agreement"]["kappa"] == command["agreement"]["kappa"]
    assert got.json()["multi_rater"]["krippendorff_alpha"] == command["multi_rater"]["krippendorff_alpha"]
    bad = engineer.get("/api/runs/r1/criteria/quality/agreement/?weights=cubic")
    assert bad.status_code == 400 and "weights" in json.dumps(bad.json())
    assert engineer.get("/api/runs/r1/criteria/nothing/agreement/").status_code == 404
    assert api_client_for("ann", "annotator").get("/api/runs/r1/criteria/quality/agreement/").status_code == 403
