"""Paired comparisons: the seed's worked cases through the real commands, stale gold checked first, set
algebra over qids equal to the per-question count."""

import math
import random

import pytest

from annotation.selectors.datasets import dataset_get, version_get, version_strata
from tests.comparisons.support import (
    PINNED,
    build_300,
    build_stratum_regression,
    import_questions,
    import_run,
    q,
    qids,
    run_command,
)

pytestmark = pytest.mark.django_db


def test_300_question_comparison_38_14_discordant(tmp_path):
    v, a_only = build_300(tmp_path)
    out = run_command("compare", "A", "B")
    assert (out["n"], out["a_score"], out["b_score"], out["diff_points"]) == (300, 0.71, 0.79, 8.0)
    assert (out["b_only"], out["a_only"]) == (38, 14)
    assert out["regressions"] == a_only and out["regressions"] == sorted(out["regressions"])
    assert round(out["se_points"], 2) == 2.36
    assert [round(x, 1) for x in out["naive_ci95"]] == [1.1, 14.9]
    assert [round(x, 1) for x in out["ci95"]] == [3.3, 12.7]
    assert round(out["resolvable_gap_points"], 2) == 4.71
    keys = [
        "n",
        "a_score",
        "b_score",
        "diff_points",
        "ci95",
        "naive_ci95",
        "se_points",
        "b_only",
        "a_only",
        "regressions",
        "resolvable_gap_points",
    ]
    assert list(out)[:11] == keys
    # Band from A and its two reruns (0.71, 0.70, 0.72): sd 1 point, width 4 points; 8.0 clears both bars.
    assert out["band"]["runs"] == ["A", "A-rerun-1", "A-rerun-2"]
    assert math.isclose(out["band"]["width_points"], 4.0, abs_tol=1e-9)
    assert out["verdict"]["status"] == "clears both bars"
    assert out["differs"] == {"prompt_hash": [PINNED["prompt_hash"], "p2"]}
    assert out["dataset_hash_match"] is True and out["warnings"] == []
    ps = out["per_stratum"]
    assert sorted(ps) == ["how_to", "policy_lookup"]
    assert ps["how_to"]["n"] + ps["policy_lookup"]["n"] == 300
    assert ps["how_to"]["b_only"] + ps["policy_lookup"]["b_only"] == 38
    assert ps["how_to"]["a_only"] + ps["policy_lookup"]["a_only"] == 14
    assert out["stale_gold"][v["dataset_hash"]]["stale"] == 0
    lean = run_command("compare", "A", "B", "--no-strata")
    assert lean["per_stratum"] is None and {k: lean[k] for k in keys} == {k: out[k] for k in keys}


def test_compare_unknown_run_exits_2(tmp_path):
    build_300(tmp_path, repeats=False)
    out = run_command("compare", "A", "nope", expect=2)
    assert out["error"] == "unknown run 'nope'"


def test_compare_and_failures_text_output(tmp_path):
    import io

    from django.core.management import call_command

    build_300(tmp_path)
    out = io.StringIO()
    call_command("compare", "A", "B", stdout=out)
    text = out.getvalue()
    assert "gap +8.0 points" in text and "naive, unpaired: [1.1, 14.9]" in text
    assert "only B right 38, only A right 14" in text and "verdict: +8.0 points clears both bars" in text
    assert "this n resolves gaps of 4.7 points; a gap of 6.7 points is found with 80% power\n" in text
    assert "McNemar exact p 0.001195" in text and "[3.3, 12.7] (bootstrap_percentile)" in text
    out = io.StringIO()
    call_command("failures", "B", stdout=out)
    assert out.getvalue().startswith("run B: 63 failing of 300 scored (300 answered)")
    out = io.StringIO()
    call_command("series", "--dataset", "support", stdout=out)
    assert "system rag-v1" in out.getvalue() and "system rag-v2" in out.getvalue()


def test_same_gap_inside_a_wide_run_to_run_band(tmp_path):
    """The 8-point gap excludes zero, but reruns that wander 0.62-0.80 make it rerun noise."""
    v, _ = build_300(tmp_path, repeats=False)
    for run_id, right in (("wide-1", 186), ("wide-2", 240)):
        import_run(
            tmp_path,
            run_id=run_id,
            system="rag-v1",
            dataset="support",
            dataset_hash=v["dataset_hash"],
            correct={i: n < right for n, i in enumerate(qids(300))},
            started_at="2026-06-07T04:00:00Z",
        )
    out = run_command("compare", "A", "B", "--band-runs", "A,wide-1,wide-2")
    assert out["band"]["runs"] == ["A", "wide-1", "wide-2"] and out["band"]["from"] == "given"
    assert math.isclose(out["band"]["width_points"], 36.0, abs_tol=1e-9)  # scores 71, 62, 80: sd 9 points
    assert (out["verdict"]["status"], out["verdict"]["clears_interval"], out["verdict"]["clears_band"]) == (
        "inside the band",
        True,
        False,
    )
    assert run_command("compare", "A", "B", "--band-runs", "A,nope", expect=2)["error"] == "unknown run 'nope'"


def test_compare_checks_stale_gold_first_and_reports_it(tmp_path, corpus_file):
    run_command("import_corpus", str(corpus_file))
    live = "Passwords rotate every ninety days."
    v = import_questions(
        tmp_path,
        "support",
        [
            q("q-0000", gold_doc_id="confluence:SEC/12", gold_chunk_id="confluence:SEC/12#0000", gold_text=live),
            q(
                "q-0001",
                gold_doc_id="confluence:SEC/12",
                gold_chunk_id="confluence:SEC/12#0000",
                gold_text="Passwords never expire.",
            ),  # no longer in the corpus
            q("q-0002", gold_doc_id=None, gold_chunk_id=None, stratum="no_answer"),
        ],
        "v1",
    )
    for run_id, right in (
        ("A", {"q-0000": True, "q-0001": True, "q-0002": False}),
        ("B", {"q-0000": True, "q-0001": False, "q-0002": True}),
    ):
        import_run(
            tmp_path, run_id=run_id, system=run_id, dataset="support", dataset_hash=v["dataset_hash"], correct=right
        )
    out = run_command("compare", "A", "B", "--iters", "100")
    report = out["stale_gold"][v["dataset_hash"]]
    assert (report["checked"], report["stale"], report["stale_qids"], report["stale_in_paired"]) == (
        2,
        1,
        ["q-0001"],
        1,
    )
    assert report["stale_in_discordant"] == 1  # q-0001: A right, B wrong
    assert out["warnings"] == [
        f"1 gold label(s) of {v['dataset_hash'][:19]}… are stale (1 among the paired questions, 1 on "
        f"discordant ones, where a stale label can move the difference): their gold_text is no longer in "
        f"the live corpus"
    ]
    assert run_command("compare", "A", "B", "--iters", "100", "--no-stale-check")["stale_gold"] == {}


def test_stale_gold_on_concordant_questions_only_cannot_move_the_difference(tmp_path, corpus_file):
    run_command("import_corpus", str(corpus_file))
    gone = {"gold_doc_id": "confluence:SEC/12", "gold_chunk_id": "confluence:SEC/12#0000"}
    v = import_questions(
        tmp_path,
        "support",
        [
            q("q-0000", gold_text="Passwords never expire.", **gone),  # stale, both right
            q("q-0001", gold_text="Passwords expire hourly.", **gone),  # stale, both wrong
            q("q-0002", gold_doc_id=None, gold_chunk_id=None, stratum="no_answer"),  # B only
        ],
        "v1",
    )
    for run_id, right in (
        ("A", {"q-0000": True, "q-0001": False, "q-0002": False}),
        ("B", {"q-0000": True, "q-0001": False, "q-0002": True}),
    ):
        import_run(
            tmp_path, run_id=run_id, system=run_id, dataset="support", dataset_hash=v["dataset_hash"], correct=right
        )
    out = run_command("compare", "A", "B", "--iters", "100")
    report = out["stale_gold"][v["dataset_hash"]]
    assert (report["stale"], report["stale_in_paired"], report["stale_in_discordant"]) == (2, 2, 0)
    assert out["warnings"] == [
        f"2 gold label(s) of {v['dataset_hash'][:19]}… are stale (2 among the paired questions, 0 on "
        f"discordant ones, where a stale label can move the difference): their gold_text is no longer in "
        f"the live corpus"
    ]


STRATA = ["policy_lookup", "procedural", "no_answer"]


def test_set_algebra_comparison_matches_the_per_question_count(tmp_path):
    """compare_runs counts with sets (and strata from B's version, then A's); count the same things
    question by question here and they must agree, stratum by stratum."""

    from annotation.models import Run
    from calibration.selectors.grades import run_grades

    rng = random.Random(11)
    v1_records = [q(i, stratum=rng.choice(STRATA)) for i in qids(120)]
    v1 = import_questions(tmp_path, "support", v1_records, "v1")
    # v2 drops 10 questions, moves some to another stratum and adds 15 in a new one.
    v2_records = [dict(r, stratum=rng.choice(STRATA)) if rng.random() < 0.1 else r for r in v1_records[10:]]
    v2_records += [q(i, stratum="comparison") for i in qids(15, start=300)]
    v2 = import_questions(tmp_path, "support", v2_records, "v2")

    def outcome():
        return rng.choice([True, True, True, False, None])

    a_correct = {r["qid"]: outcome() for r in v1_records}
    b_correct = {r["qid"]: outcome() for r in v2_records}
    import_run(tmp_path, run_id="A", system="s1", dataset="support", dataset_hash=v1["dataset_hash"], correct=a_correct)
    import_run(tmp_path, run_id="B", system="s2", dataset="support", dataset_hash=v2["dataset_hash"], correct=b_correct)

    out = run_command("compare", "A", "B", "--iters", "500")
    ga, _gb = run_grades(Run.objects.get(run_id="A")), run_grades(Run.objects.get(run_id="B"))
    assert ga.scores == {k: v for k, v in a_correct.items() if v is not None}
    assert ga.tally(list(a_correct)) == (
        sum(v is True for v in a_correct.values()),
        sum(v is False for v in a_correct.values()),
    )
    paired = sorted(k for k in a_correct if a_correct[k] is not None and b_correct.get(k) is not None)
    assert out["n"] == len(paired)
    assert out["b_only"] == sum(b_correct[k] and not a_correct[k] for k in paired)
    assert out["a_only"] == sum(a_correct[k] and not b_correct[k] for k in paired)
    assert out["regressions"] == [k for k in paired if a_correct[k] and not b_correct[k]]
    both = set(a_correct) & set(b_correct)
    only_a, only_b, unscored = len(set(a_correct) - both), len(set(b_correct) - both), len(both) - len(paired)
    assert only_a == 10 and only_b == 15 and unscored > 0
    assert out["pairing"] == {
        "paired": len(paired),
        "dropped": only_a + only_b + unscored,
        "answered_only_a": only_a,
        "answered_only_b": only_b,
        "unscored": unscored,
    }

    stratum_of = {
        **version_strata(version_get(dataset_get("support"), "1")),
        **version_strata(version_get(dataset_get("support"), "2")),
    }
    expected = {}
    for k in paired:
        s = expected.setdefault(stratum_of[k], {"n": 0, "b_only": 0, "a_only": 0})
        s["n"] += 1
        s["b_only"] += bool(b_correct[k] and not a_correct[k])
        s["a_only"] += bool(a_correct[k] and not b_correct[k])
    assert {name: {k: s[k] for k in ("n", "b_only", "a_only")} for name, s in out["per_stratum"].items()} == expected
    assert list(out["per_stratum"]) == sorted(expected)


def test_compare_and_the_failure_report_name_the_disputed_answers_left_out(tmp_path, make_user):
    from annotation.models import Answer
    from annotation.selectors.disputes import dispute_key
    from annotation.services.disputes import dispute_adjudicate
    from tests.annotation.conftest import import_disputed_run

    make_user("ann1", "annotator")
    make_user("ann2", "annotator")
    adj = make_user("adj", "adjudicator")
    import_disputed_run(tmp_path, n=8, disputed=(1, 4), run_id="run-a")
    import_disputed_run(tmp_path, n=8, disputed=(4, 6), run_id="run-b")
    out = run_command("compare", "run-a", "run-b")
    assert out["n"] == 5
    assert out["disputed_left_out"] == {
        "n": 3,
        "answers": ["q-0001", "q-0004", "q-0006"],
        "words": "3 disputed answers left out: q-0001, q-0004, q-0006",
        "a": ["q-0001", "q-0004"],
        "b": ["q-0004", "q-0006"],
    }
    assert (
        "3 disputed answers left out: q-0001, q-0004, q-0006 (settle them on the adjudication list)"
        in (out["warnings"])
    )
    assert out["grading"]["b"]["disputed_left_out"]["answers"] == ["q-0004", "q-0006"]
    failures = run_command("failures", "run-a")
    assert failures["disputed_left_out"]["words"] == "2 disputed answers left out: q-0001, q-0004"
    answer = Answer.objects.get(run__run_id="run-a", qid="q-0001")
    dispute_adjudicate(key=dispute_key(answer.pk), adjudicator=adj, verdict="correct", reason="right")
    assert run_command("compare", "run-a", "run-b")["disputed_left_out"]["a"] == ["q-0004"]


def test_a_regression_inside_one_stratum_is_named_first(tmp_path):
    from evalstats.paired import mcnemar_exact_p

    build_stratum_regression(tmp_path)
    out = run_command("compare", "A", "B")
    assert (out["diff_points"], out["b_only"], out["a_only"]) == (8.0, 38, 14)
    assert out["verdict"]["status"] == "clears both bars"
    na = out["per_stratum"]["no_answer"]
    assert (na["n"], na["b_only"], na["a_only"], round(na["diff_points"], 1)) == (30, 0, 10, -33.3)
    assert [round(x, 1) for x in na["ci95"]] == [-50.0, -16.7]
    assert na["ci95_method"] == "bootstrap_percentile"
    assert na["mcnemar_p"] == mcnemar_exact_p(0, 10) == 2 * 0.5**10
    assert out["per_stratum"]["policy_lookup"]["ci95"][0] > 0
    assert out["stratum_regressions"] == ["no_answer"]
    assert out["warnings"][0] == (
        "REGRESSION IN A STRATUM: no_answer -33.3 points [-50.0, -16.7]: B is worse than A there (the 95% "
        "interval lies wholly below zero), whatever the total (+8.0 points) says."
    )


def test_fail_on_regression_exit_codes(tmp_path):
    build_stratum_regression(tmp_path)
    failed = run_command("compare", "A", "B", "--fail-on-regression", expect=1)
    assert failed["stratum_regressions"] == ["no_answer"]
    assert run_command("compare", "A-rerun-1", "A-rerun-2", "--fail-on-regression")["stratum_regressions"] == []
    refused = run_command("compare", "A", "B", "--fail-on-regression", "--no-strata", expect=2)
    assert refused["problems"] == [
        {
            "line": None,
            "field": "no_strata",
            "message": "--fail-on-regression needs the per-stratum gaps; drop --no-strata",
        }
    ]


def test_fail_on_regression_passes_without_one(tmp_path):
    build_300(tmp_path, repeats=False)
    out = run_command("compare", "A", "B", "--fail-on-regression")
    assert out["stratum_regressions"] == [] and out["warnings"] == []


def test_fail_on_regression_in_text_mode_exits_1_naming_the_stratum(tmp_path):
    import io

    from django.core.management import call_command

    build_stratum_regression(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("compare", "A", "B", "--fail-on-regression", stdout=out, stderr=err)
    assert exc.value.code == 1
    assert err.getvalue().startswith("WARNING: REGRESSION IN A STRATUM: no_answer -33.3 points")
    assert "no_answer                n=30      -33.3 [-50.0, -16.7]  +0/-10  p 0.00195  REGRESSION\n" in err.getvalue()


def test_no_discordant_question_gives_an_honest_interval(tmp_path):
    from evalstats.paired import newcombe_paired_ci

    ids = qids(30)
    v = import_questions(tmp_path, "support", [q(i) for i in ids], "v1")
    right = {i: n < 21 for n, i in enumerate(ids)}
    for run_id, system in (("A", "rag-v1"), ("B", "rag-v2")):
        import_run(
            tmp_path, run_id=run_id, system=system, dataset="support", dataset_hash=v["dataset_hash"], correct=right
        )
    out = run_command("compare", "A", "B")
    assert (out["n"], out["b_only"], out["a_only"], out["diff_points"]) == (30, 0, 0, 0.0)
    assert out["ci95"] == list(newcombe_paired_ci(both_right=21, b_only=0, a_only=0, neither=9))
    assert out["ci95"][0] < 0 < out["ci95"][1]
    assert out["ci95_method"] == "newcombe_hybrid_score"
    assert out["ci95_reason"].startswith("0 discordant questions (fewer than 10)")
    assert out["mcnemar_p"] == 1.0 and out["detectable_gap_80"] is None
    assert out["per_stratum"]["policy_lookup"]["ci95"] == out["ci95"]
    assert "resolves gaps of 0.0" not in out["verdict"]["words"]
    assert out["verdict"]["words"].endswith(
        "(no question is answered differently, so the discordance the resolvable gap rests on is unmeasured)."
    )
    import io

    from django.core.management import call_command

    text = io.StringIO()
    call_command("compare", "A", "B", stdout=text)
    assert "  the resolvable gap is unmeasured: no question is answered differently\n" in text.getvalue()
    assert "resolves gaps of 0.0" not in text.getvalue()
    assert "(newcombe_hybrid_score)" in text.getvalue()


def test_compare_reports_mcnemar_and_the_gap_found_with_80_percent_power(tmp_path):
    build_300(tmp_path, repeats=False)
    out = run_command("compare", "A", "B")
    assert round(out["mcnemar_p"], 6) == 0.001195
    assert round(out["detectable_gap_80"], 2) == 6.73
    assert out["ci95_method"] == "bootstrap_percentile" and out["ci95_reason"] is None
    assert out["resolvable_gap_note"].startswith(
        "The resolvable gap is the 95% interval's half-width: a real gap of that size is found only about half the time"
    )
    assert out["verdict"]["status"] == "band unmeasured"
