"""Dataset history: a relabelled batch moves the aggregate while the intersection stays flat; a grown set's ceiling."""

import math

import pytest

from tests.comparisons.support import (
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
    v1 = import_questions(
        tmp_path, "support", [q(i, stratum="policy_lookup" if n % 2 else "how_to") for n, i in enumerate(ids)], "v1"
    )
    relabelled = set(ids[:168])
    v2 = import_questions(
        tmp_path,
        "support",
        [
            q(
                i,
                stratum="policy_lookup" if n % 2 else "how_to",
                **({"expected": f"corrected answer {i}", "labelled_by": "j.okafor"} if i in relabelled else {}),
            )
            for n, i in enumerate(ids)
        ],
        "v2",
    )
    assert (v2["examples"], v2["modified"], v2["unchanged"], v2["added"], v2["removed"]) == (2000, 168, 1832, 0, 0)

    unchanged = ids[168:]
    # The system answers the unchanged 1,832 exactly alike in both runs: 1,564 right.
    same = {i: n < 1564 for n, i in enumerate(unchanged)}
    old = {**{i: n < 60 for n, i in enumerate(ids[:168])}, **same}  # 60 of the 168 right under the old gold
    new = {**{i: n < 162 for n, i in enumerate(ids[:168])}, **same}  # 162 right under the corrected gold
    import_run(
        tmp_path, run_id="nightly-old", system="rag-v2", dataset="support", dataset_hash=v1["dataset_hash"], correct=old
    )
    import_run(
        tmp_path,
        run_id="nightly-new",
        system="rag-v2",
        dataset="support",
        dataset_hash=v2["dataset_hash"],
        correct=new,
        started_at="2026-06-08T02:00:00Z",
    )

    out = run_command(
        "diff_datasets",
        "--dataset",
        "support",
        v1["dataset_hash"],
        v2["dataset_hash"],
        "--run-old",
        "nightly-old",
        "--run-new",
        "nightly-new",
    )
    assert out["modified"] == sorted(relabelled)
    assert (len(out["added"]), len(out["removed"]), len(out["unchanged"])) == (0, 0, 1832)
    m = out["movement"]
    assert m["old_aggregate"] == 0.812
    assert m["new_aggregate"] == 0.863
    assert m["n_intersection"] == 1832
    assert m["intersection_old"] == m["intersection_new"] == 1564 / 1832  # flat
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
    import_run(
        tmp_path,
        run_id="r-1400",
        system="rag-v2",
        dataset="support",
        dataset_hash=v1["dataset_hash"],
        correct={i: n < 1106 for n, i in enumerate(ids[:1400])},
    )
    import_run(
        tmp_path,
        run_id="r-1600",
        system="rag-v2",
        dataset="support",
        dataset_hash=v2["dataset_hash"],
        correct={**{i: n < 1190 for n, i in enumerate(ids[:1400])}, **{i: n < 170 for n, i in enumerate(ids[1400:])}},
        started_at="2026-06-09T02:00:00Z",
    )

    out = run_command(
        "diff_datasets",
        "--dataset",
        "support",
        v1["dataset_hash"],
        v2["dataset_hash"],
        "--run-old",
        "r-1400",
        "--run-new",
        "r-1600",
    )
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
        "r-1400",
        "r-1600",
        0.79,
        0.85,
    )
    assert movement["contributions"] == m["contributions"]
    (ceiling,) = history["versions"][1]["ceilings"]
    assert (
        ceiling["old_run"],
        ceiling["new_run"],
        ceiling["ceiling"],
        ceiling["new_score"],
        ceiling["exceeds_ceiling"],
    ) == ("r-1400", "r-1600", 1306 / 1600, 0.85, True)


def _two_versions_with_runs(tmp_path, new_runs):
    """v1: 10 questions; v2: the same 10 and 2 added. rag-v2 scored 6/10 on v1 under cfg1; `new_runs` on v2."""
    ids = qids(12)
    v1 = import_questions(tmp_path, "support", [q(i) for i in ids[:10]], "v1")
    v2 = import_questions(tmp_path, "support", [q(i) for i in ids], "v2")
    import_run(
        tmp_path,
        run_id="old",
        system="rag-v2",
        dataset="support",
        dataset_hash=v1["dataset_hash"],
        correct={i: n < 6 for n, i in enumerate(ids[:10])},
    )
    for run_id, right, at, pinned in new_runs:
        import_run(
            tmp_path,
            run_id=run_id,
            system="rag-v2",
            dataset="support",
            dataset_hash=v2["dataset_hash"],
            correct={i: n < right for n, i in enumerate(ids)},
            started_at=at,
            **pinned,
        )


def test_history_pairs_only_runs_whose_pinned_fields_agree(tmp_path):
    """The latest v2 run was scored by another evaluator config: the pair is the earlier run on cfg1."""
    _two_versions_with_runs(
        tmp_path,
        [
            ("same-cfg", 7, "2026-06-08T02:00:00Z", {}),
            ("other-cfg", 12, "2026-06-09T02:00:00Z", {"evaluator_config_hash": "sha256:cfg2"}),
        ],
    )
    from comparisons.selectors.history import dataset_history

    v2 = dataset_history("support")["versions"][1]
    (movement,) = v2["movements"]
    assert (movement["old_run"], movement["new_run"], movement["new_aggregate"]) == ("old", "same-cfg", 7 / 12)
    (ceiling,) = v2["ceilings"]
    assert (ceiling["old_run"], ceiling["new_run"], ceiling["new_score"], ceiling["ceiling"]) == (
        "old",
        "same-cfg",
        7 / 12,
        8 / 12,
    )
    assert (ceiling["exceeds_ceiling"], ceiling["differs"]) == (False, [])
    assert v2["unpaired"] == []


def test_history_names_the_differing_pinned_fields_when_no_run_qualifies(tmp_path):
    _two_versions_with_runs(
        tmp_path,
        [("other-cfg", 12, "2026-06-09T02:00:00Z", {"evaluator_config_hash": "sha256:cfg2", "prompt_hash": "p2"})],
    )
    from comparisons.selectors.history import dataset_history

    v2 = dataset_history("support")["versions"][1]
    assert v2["movements"] == []
    (ceiling,) = v2["ceilings"]
    # The ceiling stands on the old run alone; no new score is printed against it.
    assert (ceiling["ceiling"], ceiling["new_run"], ceiling["new_score"], ceiling["exceeds_ceiling"]) == (
        8 / 12,
        None,
        None,
        False,
    )
    assert ceiling["differs"] == ["prompt_hash", "evaluator_config_hash"]
    assert v2["unpaired"] == [
        {
            "system": "rag-v2",
            "old_run": "old",
            "new_run": "other-cfg",
            "differs": ["prompt_hash", "evaluator_config_hash"],
            "words": (
                "rag-v2: no run on v1 and v2 agree on their pinned fields, so none is compared; "
                "old → other-cfg differ in prompt_hash (p1 → p2), evaluator_config_hash (sha256:cfg1 → sha256:cfg2)."
            ),
        }
    ]
