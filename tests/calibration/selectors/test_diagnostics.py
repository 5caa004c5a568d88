"""The human-human ceiling on the judge page counts the unresolved disagreements a sample cannot draw."""

import pytest
from django.utils import timezone
from sklearn.metrics import cohen_kappa_score

from annotation.models import Answer, Dataset
from annotation.services.label_import import labels_import
from annotation.services.labels import adjudication_record
from calibration.models import CalibrationRun, Measurement, Verdict
from calibration.selectors.diagnostics import human_ceiling, length_bias
from calibration.services.judges import judge_version_create
from calibration.services.samples import sample_draw
from tests.calibration.world import human_verdict, load_world
from tests.conftest import write_jsonl

pytestmark = pytest.mark.django_db

DISPUTED = (12, 40)


def _measured(tmp_path, make_user):
    """The 60-answer world (two annotators agree on every answer) with a third annotator who disagrees
    on q-0012 and q-0040: those two are disputed, and a 60-answer sample draws the other 58."""
    load_world(tmp_path / "world")
    make_user("ann-c", "annotator")
    lines = [
        {
            "run_id": "run-a",
            "qid": f"q-{i:04d}",
            "annotator": "ann-c",
            "verdict": "correct" if human_verdict(i) == "incorrect" else "incorrect",
        }
        for i in DISPUTED
    ]
    labels_import(path=write_jsonl(tmp_path / "third.jsonl", lines))
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    sample = sample_draw(judge=version.judge, dataset=Dataset.objects.get(name="support"), size=60, seed=0)
    assert sample.items.count() == 58
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=58)
    return Measurement.objects.create(
        judge_version=version,
        run=run,
        n=58,
        labels=["correct", "incorrect"],
        confusion=[[0, 0], [0, 0]],
        measured_at=timezone.now(),
    )


def test_the_ceiling_counts_unresolved_disagreements_too(tmp_path, make_user):
    ceiling = human_ceiling(_measured(tmp_path, make_user))
    assert ceiling is not None
    # 58 sampled answers, one agreeing pair each; each disputed answer has 3 labels: the agreeing pair
    # and two pairs with ann-c that disagree.
    a, b = [], []
    for i in range(60):
        v = human_verdict(i)
        if i in DISPUTED:
            w = "correct" if v == "incorrect" else "incorrect"
            a += [v, v, v]
            b += [v, w, w]
        else:
            a.append(v)
            b.append(v)
    assert (ceiling["answers"], ceiling["unresolved"], ceiling["n"]) == (60, 2, 64)
    assert ceiling["raw_agreement"] == 60 / 64
    assert ceiling["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert ceiling["kappa"] < 1.0


def test_the_ceiling_adds_krippendorffs_alpha_over_answers_with_three_or_more_labels(tmp_path, make_user):
    ceiling = human_ceiling(_measured(tmp_path, make_user))
    assert ceiling is not None
    # Only q-0012 (incorrect, incorrect, correct) and q-0040 (correct, correct, incorrect) carry three
    # labels. Coincidences, each pair weighted 1/(3-1): o(c,c) = o(i,i) = 1, o(c,i) = o(i,c) = 2, n = 6;
    # D_o = 4/6, D_e = 2 * 3 * 3 / (6 * 5) = 0.6, alpha = 1 - (4/6) / 0.6 = -1/9.
    multi = ceiling["multi_rater"]
    assert (multi["answers"], multi["raters"], multi["ratings"], multi["metric"]) == (2, 3, 6, "nominal")
    assert multi["krippendorff_alpha"] == pytest.approx(-1 / 9, abs=1e-12)
    assert multi["alpha_ci95"] is None  # two answers: too few for a bootstrap interval


def test_no_multi_rater_figure_without_an_answer_with_three_labels(tmp_path, make_user):
    load_world(tmp_path / "world")
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    sample = sample_draw(judge=version.judge, dataset=Dataset.objects.get(name="support"), size=60, seed=0)
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=60)
    measurement = Measurement.objects.create(
        judge_version=version,
        run=run,
        n=60,
        labels=["correct", "incorrect"],
        confusion=[[0, 0], [0, 0]],
        measured_at=timezone.now(),
    )
    ceiling = human_ceiling(measurement)
    assert ceiling is not None
    assert (ceiling["answers"], ceiling["n"], ceiling["kappa"]) == (60, 60, 1.0)
    assert ceiling["multi_rater"] is None


def _measure_all(version, *, size=60):
    sample = sample_draw(judge=version.judge, dataset=Dataset.objects.get(name="support"), size=size, seed=0)
    run = CalibrationRun.objects.create(judge_version=version, sample=sample, status="done", total=sample.size)
    return Measurement.objects.create(
        judge_version=version,
        run=run,
        n=sample.size,
        labels=["correct", "incorrect"],
        confusion=[[0, 0], [0, 0]],
        measured_at=timezone.now(),
    )


def _relabel(tmp_path, name: str, lines: list[dict]) -> None:
    labels_import(path=write_jsonl(tmp_path / name, lines), replace=True, reason="second look")


def _pairs_in_order(measurement) -> tuple[list[str], list[str]]:
    """The ceiling's pairs read label by label (first label first), as a reference."""
    from annotation.models import HumanLabel

    answers = measurement.run.sample.items.values("answer_id")
    by_answer: dict[int, list[str]] = {}
    for answer_id, verdict in (
        HumanLabel.objects.filter(answer_id__in=answers)
        .order_by("answer_id", "labelled_at", "annotator_id")
        .values_list("answer_id", "verdict")
    ):
        by_answer.setdefault(answer_id, []).append(verdict)
    a = [v[0] for v in by_answer.values()]
    b = [v[1] for v in by_answer.values()]
    return a, b


def test_the_ceiling_keeps_which_label_came_first_and_follows_a_label_change(tmp_path, make_user):
    load_world(tmp_path / "world")
    adjudicator = make_user("adj", "adjudicator")
    # q-0005 (humans: correct): ann-b says incorrect a day later; q-0003 (humans: incorrect): ann-b says
    # correct a day earlier. Both pairs are then (correct, incorrect) in time order, never the reverse.
    _relabel(
        tmp_path,
        "flip.jsonl",
        [
            {
                "run_id": "run-a",
                "qid": "q-0005",
                "annotator": "ann-b",
                "verdict": "incorrect",
                "labelled_at": "2026-06-09T10:00:00Z",
            },
            {
                "run_id": "run-a",
                "qid": "q-0003",
                "annotator": "ann-b",
                "verdict": "correct",
                "labelled_at": "2026-06-07T10:00:00Z",
            },
        ],
    )
    for qid in ("q-0005", "q-0003"):
        adjudication_record(answer=Answer.objects.get(qid=qid), adjudicator=adjudicator, verdict="correct")
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    measurement = _measure_all(version)

    ceiling = human_ceiling(measurement)
    assert ceiling is not None
    assert ceiling["agreement"].confusion == ((35, 2), (0, 23))
    a, b = _pairs_in_order(measurement)
    assert (ceiling["n"], ceiling["answers"], ceiling["unresolved"]) == (60, 60, 0)
    assert ceiling["raw_agreement"] == 58 / 60
    assert ceiling["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)

    # The ceiling reads the labels live: ann-a's label on q-0010 (humans: correct) is replaced by an
    # earlier-dated incorrect one, and the next read counts the new disagreement, incorrect first.
    _relabel(
        tmp_path,
        "again.jsonl",
        [
            {
                "run_id": "run-a",
                "qid": "q-0010",
                "annotator": "ann-a",
                "verdict": "incorrect",
                "labelled_at": "2026-06-07T09:00:00Z",
            }
        ],
    )
    after = human_ceiling(measurement)
    assert after is not None
    assert after["agreement"].confusion == ((34, 2), (1, 23))
    a, b = _pairs_in_order(measurement)
    assert after["raw_agreement"] == 57 / 60
    assert after["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert after["kappa"] < ceiling["kappa"]


def _reference_length_bias(run) -> list[dict]:
    """Quartiles read row by row: verdicts in item order, stably sorted by the answer's length."""
    rows = [
        (len(v.item.answer.answer), v.verdict, v.human_verdict)
        for v in Verdict.objects.filter(run=run)
        .exclude(human_verdict="")
        .order_by("item_id")
        .select_related("item__answer")
    ]
    rows.sort(key=lambda r: r[0])
    n, out = len(rows), []
    for q in range(4):
        part = rows[q * n // 4 : (q + 1) * n // 4]
        if part:
            judge = sum(1 for r in part if r[1] == "correct") / len(part)
            human = sum(1 for r in part if r[2] == "correct") / len(part)
            out.append(
                {
                    "quartile": q + 1,
                    "n": len(part),
                    "min_chars": part[0][0],
                    "max_chars": part[-1][0],
                    "judge_pass_rate": judge,
                    "human_pass_rate": human,
                    "difference": judge - human,
                }
            )
    return out


def test_length_bias_quartiles_are_exact_with_ties_in_item_order(tmp_path, make_user):
    # Answers of two lengths only, so the quartile boundaries cut through ties.
    load_world(tmp_path / "world", n=30)
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    measurement = _measure_all(version, size=30)
    items = list(measurement.run.sample.items.order_by("pk").select_related("answer"))
    Verdict.objects.bulk_create(
        [
            Verdict(
                run=measurement.run,
                item=item,
                verdict=("correct", "incorrect", "invalid")[k % 3],
                human_verdict="" if k == 4 else item.answer.final_verdict,
            )
            for k, item in enumerate(items)
        ]
    )
    expected = _reference_length_bias(measurement.run)
    assert [q["n"] for q in expected] == [7, 7, 7, 8]
    assert length_bias(measurement) == expected
    assert length_bias(measurement) == expected  # the second read is the kept figure, the same


@pytest.mark.parametrize("size", [2, 3, 5, 6, 11])
def test_length_bias_quartiles_cut_where_slices_of_the_sorted_items_cut(tmp_path, size):
    # Fewer items than quartiles, and sizes whose quarters are not whole: the quartiles the database
    # sums are the slices q*n//4 to (q+1)*n//4 of the items sorted by length (ties in item order).
    load_world(tmp_path / "world", n=size + 1)
    version = judge_version_create(judge_name="span-judge", backend="span")[0]
    measurement = _measure_all(version, size=size + 1)
    items = list(measurement.run.sample.items.order_by("pk").select_related("answer"))
    Verdict.objects.bulk_create(
        [
            Verdict(
                run=measurement.run,
                item=item,
                verdict=("incorrect", "correct")[k % 2],
                human_verdict="" if k == 1 else item.answer.final_verdict,
            )
            for k, item in enumerate(items)
        ]
    )
    expected = _reference_length_bias(measurement.run)
    assert sum(q["n"] for q in expected) == len(items) - 1
    assert length_bias(measurement) == expected
