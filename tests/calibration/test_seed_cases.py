"""The seed's worked cases, end to end through the real commands (JSONL in tmp_path)."""
import math

import pytest

from tests.calibration.test_compare_support import (
    PINNED,
    import_questions,
    import_run,
    q,
    qids,
    run_command,
)

pytestmark = pytest.mark.django_db


def test_relabelled_batch_moves_the_aggregate_while_the_intersection_stays_flat(tmp_path):
    """2,000 examples, 168 relabelled: 0.812 -> 0.863, all of it from the relabelled batch."""
    ids = qids(2000)
    v1 = import_questions(tmp_path, "support", [q(i, stratum="policy_lookup" if n % 2 else "how_to")
                                                for n, i in enumerate(ids)], "v1")
    relabelled = set(ids[:168])
    v2 = import_questions(tmp_path, "support", [
        q(i, stratum="policy_lookup" if n % 2 else "how_to",
          **({"expected": f"corrected answer {i}", "labelled_by": "j.okafor"} if i in relabelled else {}))
        for n, i in enumerate(ids)], "v2")
    assert (v2["examples"], v2["modified"], v2["unchanged"], v2["added"], v2["removed"]) == (2000, 168, 1832, 0, 0)

    unchanged = ids[168:]
    # The system answers the unchanged 1,832 exactly alike in both runs: 1,564 right.
    same = {i: n < 1564 for n, i in enumerate(unchanged)}
    old = {**{i: n < 60 for n, i in enumerate(ids[:168])}, **same}    # 60 of the 168 right under the old gold
    new = {**{i: n < 162 for n, i in enumerate(ids[:168])}, **same}   # 162 right under the corrected gold
    import_run(tmp_path, run_id="nightly-old", system="rag-v2", dataset="support", dataset_hash=v1["dataset_hash"],
               correct=old)
    import_run(tmp_path, run_id="nightly-new", system="rag-v2", dataset="support", dataset_hash=v2["dataset_hash"],
               correct=new, started_at="2026-06-08T02:00:00Z")

    out = run_command("diff_datasets", "--dataset", "support", v1["dataset_hash"], v2["dataset_hash"],
                      "--run-old", "nightly-old", "--run-new", "nightly-new")
    assert out["modified"] == sorted(relabelled)
    assert (len(out["added"]), len(out["removed"]), len(out["unchanged"])) == (0, 0, 1832)
    m = out["movement"]
    assert m["old_aggregate"] == 0.812
    assert m["new_aggregate"] == 0.863
    assert m["n_intersection"] == 1832
    assert m["intersection_old"] == m["intersection_new"] == 1564 / 1832     # flat
    assert m["contributions"]["unchanged"] == 0.0
    assert m["contributions"]["added"] == m["contributions"]["removed"] == 0.0
    assert math.isclose(m["contributions"]["modified"], 102 / 2000, abs_tol=1e-15)
    assert math.isclose(sum(m["contributions"].values()), m["delta"], abs_tol=1e-15)
    assert math.isclose(m["delta"], 0.051, abs_tol=1e-15)
    assert "ceiling" not in out  # nothing was added

    from comparisons.selectors.history import dataset_history

    (movement,) = dataset_history("support")["versions"][1]["movements"]
    assert movement["intersection_old"] == movement["intersection_new"] and movement["new_aggregate"] == 0.863

    # A naive compare of the two runs is flagged: they were scored on different labels.
    cmp = run_command("compare", "nightly-old", "nightly-new", "--iters", "2000")
    assert cmp["dataset_hash_match"] is False
    assert cmp["warnings"][0].startswith("DATASET HASH MISMATCH")
    assert cmp["pairing"] == {"paired": 2000, "dropped": 0, "answered_only_a": 0, "answered_only_b": 0, "unscored": 0}


def test_grown_set_ceiling_disqualifies_the_obvious_explanation(tmp_path):
    """1,400 grown to 1,600: from 0.79 the 200 additions can lift the score to 0.816 at most; 0.85 is not them."""
    ids = qids(1600)
    v1 = import_questions(tmp_path, "support", [q(i) for i in ids[:1400]], "v1")
    v2 = import_questions(tmp_path, "support", [q(i) for i in ids], "v2")
    assert (v2["added"], v2["unchanged"], v2["examples"]) == (200, 1400, 1600)
    import_run(tmp_path, run_id="r-1400", system="rag-v2", dataset="support", dataset_hash=v1["dataset_hash"],
               correct={i: n < 1106 for n, i in enumerate(ids[:1400])})
    import_run(tmp_path, run_id="r-1600", system="rag-v2", dataset="support", dataset_hash=v2["dataset_hash"],
               correct={**{i: n < 1190 for n, i in enumerate(ids[:1400])},
                        **{i: n < 170 for n, i in enumerate(ids[1400:])}},
               started_at="2026-06-09T02:00:00Z")

    out = run_command("diff_datasets", "--dataset", "support", v1["dataset_hash"], v2["dataset_hash"],
                      "--run-old", "r-1400", "--run-new", "r-1600")
    m, c = out["movement"], out["ceiling"]
    assert (m["old_aggregate"], m["new_aggregate"]) == (0.79, 0.85)
    assert c["ceiling"] == 1306 / 1600 and round(c["ceiling"], 3) == 0.816
    assert (c["n_kept"], c["n_added"], c["exceeds_ceiling"]) == (1400, 200, True)
    assert math.isclose(m["contributions"]["unchanged"], 84 / 1600, abs_tol=1e-15)
    assert math.isclose(m["contributions"]["added"], (170 - 200 * 0.79) / 1600, abs_tol=1e-15)
    assert math.isclose(sum(m["contributions"].values()), m["delta"], abs_tol=1e-15)

    # The same bound on the dataset-history selector behind the versions page.
    from comparisons.selectors.history import dataset_history

    history = dataset_history("support")
    (movement,) = history["versions"][1]["movements"]
    assert (movement["old_run"], movement["new_run"], movement["old_aggregate"], movement["new_aggregate"]) == (
        "r-1400", "r-1600", 0.79, 0.85)
    assert movement["contributions"] == m["contributions"]
    (ceiling,) = history["versions"][1]["ceilings"]
    assert (ceiling["old_run"], ceiling["new_run"], ceiling["ceiling"], ceiling["new_score"],
            ceiling["exceeds_ceiling"]) == ("r-1400", "r-1600", 1306 / 1600, 0.85, True)


def build_300(tmp_path, *, repeats: bool = True):
    """300 questions; A right on 213 (0.71), B right on 237 (0.79): 38 only B, 14 only A."""
    ids = qids(300)
    v = import_questions(tmp_path, "support", [q(i, stratum="policy_lookup" if n < 200 else "how_to")
                                               for n, i in enumerate(ids)], "v1")
    # order: 199 both right, 38 only B, 14 only A, 49 both wrong; spread over the strata by a stride.
    order = [ids[(n * 7) % 300] for n in range(300)]
    both, b_only, a_only = order[:199], order[199:237], order[237:251]
    a = {i: (i in both or i in a_only) for i in ids}
    b = {i: (i in both or i in b_only) for i in ids}
    import_run(tmp_path, run_id="A", system="rag-v1", dataset="support", dataset_hash=v["dataset_hash"], correct=a)
    import_run(tmp_path, run_id="B", system="rag-v2", dataset="support", dataset_hash=v["dataset_hash"], correct=b,
               started_at="2026-06-08T02:00:00Z", prompt_hash="p2")
    if repeats:
        # Two reruns of A's unchanged system (same pinned inputs): 0.70 and 0.72 -> band mean 0.71, sd 0.01.
        for run_id, right in (("A-rerun-1", 210), ("A-rerun-2", 216)):
            import_run(tmp_path, run_id=run_id, system="rag-v1", dataset="support", dataset_hash=v["dataset_hash"],
                       correct={i: n < right for n, i in enumerate(ids)}, started_at="2026-06-07T03:00:00Z")
    return v, sorted(a_only)


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
    keys = ["n", "a_score", "b_score", "diff_points", "ci95", "naive_ci95", "se_points", "b_only", "a_only",
            "regressions", "resolvable_gap_points"]
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
        import_run(tmp_path, run_id=run_id, system="rag-v1", dataset="support", dataset_hash=v["dataset_hash"],
                   correct={i: n < right for n, i in enumerate(qids(300))}, started_at="2026-06-07T04:00:00Z")
    out = run_command("compare", "A", "B", "--band-runs", "A,wide-1,wide-2")
    assert out["band"]["runs"] == ["A", "wide-1", "wide-2"] and out["band"]["from"] == "given"
    assert math.isclose(out["band"]["width_points"], 36.0, abs_tol=1e-9)   # scores 71, 62, 80: sd 9 points
    assert (out["verdict"]["status"], out["verdict"]["clears_interval"], out["verdict"]["clears_band"]) == (
        "inside the band", True, False)
    assert run_command("compare", "A", "B", "--band-runs", "A,nope", expect=2)["error"] == "unknown run 'nope'"
