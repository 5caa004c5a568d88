"""Stratified allocation and seeded draws (pure)."""

from collections import Counter

import pytest

from evalstats.sampling import allocate, budget_weights, draw, plan_allocation, stratified_sample


def test_budget_shares_by_largest_remainder():
    assert allocate(100, {"a": 500, "b": 500, "c": 500}, {"a": 33.3, "b": 33.3, "c": 33.4}) == {
        "a": 33,
        "b": 33,
        "c": 34,
    }
    assert allocate(20, {"a": 50, "b": 50, "c": 50}, {"a": 50, "b": 30, "c": 20}) == {"a": 10, "b": 6, "c": 4}


def test_a_full_stratum_gives_its_share_to_the_others_by_their_shares():
    assert allocate(100, {"a": 50, "b": 50, "c": 5}, {"a": 50, "b": 30, "c": 20}) == {"a": 50, "b": 45, "c": 5}


def test_floor_per_stratum_even_when_its_share_rounds_to_nothing():
    assert allocate(10, {"big": 1000, "tiny": 1000}, {"big": 99, "tiny": 1}) == {"big": 9, "tiny": 1}
    assert allocate(10, {"big": 1000, "tiny": 1000}, {"big": 99, "tiny": 1}, floor=0) == {"big": 10, "tiny": 0}


def test_without_budget_proportional_to_what_exists_and_capped_by_it():
    assert allocate(10, {"a": 3, "b": 100}) == {"a": 1, "b": 9}
    assert allocate(1000, {"a": 3, "b": 100}) == {"a": 3, "b": 100}


def test_budget_strata_with_nothing_get_nothing_and_others_are_ignored():
    assert allocate(10, {"a": 100, "zzz": 100}, {"a": 50, "b": 50}) == {"a": 10, "b": 0}


def test_fewer_items_than_strata_floors_go_to_the_biggest_shares():
    assert allocate(2, {"a": 3, "b": 100, "c": 10}, {"a": 10, "b": 80, "c": 10}) == {"a": 1, "b": 1, "c": 0}


def test_negative_size_is_refused():
    with pytest.raises(ValueError):
        allocate(-1, {"a": 1})


def test_draw_is_seeded_and_independent_of_input_order():
    candidates = {"a": [f"a{i}" for i in range(50)], "b": [f"b{i}" for i in range(50)]}
    shuffled = {"b": list(reversed(candidates["b"])), "a": list(reversed(candidates["a"]))}
    one = draw(candidates, {"a": 5, "b": 3}, seed=1)
    assert one == draw(shuffled, {"b": 3, "a": 5}, seed=1)
    assert one != draw(candidates, {"a": 5, "b": 3}, seed=2)
    assert [s for s, _ in one] == ["a"] * 5 + ["b"] * 3
    assert len({c for _, c in one}) == 8


def test_stratified_sample_spreads_by_stratum_and_respects_small_strata():
    strata = {f"q{i}": ("a" if i < 6 else "b" if i < 9 else "c") for i in range(10)}
    chosen = stratified_sample(strata, 5, seed=1)
    assert Counter(strata[q] for q in chosen) == {"a": 3, "b": 1, "c": 1} or Counter(strata[q] for q in chosen) == {
        "a": 3,
        "b": 2,
    }
    assert stratified_sample(strata, 5, seed=1) == chosen
    # A budget sets the shares; a stratum too small for its seats passes them on.
    chosen = stratified_sample(strata, 8, seed=0, budget={"a": 25, "b": 25, "c": 50})
    assert Counter(strata[q] for q in chosen) == {"a": 4, "b": 3, "c": 1}
    assert len(stratified_sample(strata, 50, seed=0)) == 10


SIX = {"a": 40, "b": 20, "c": 15, "d": 10, "e": 10, "f": 5}


def test_a_stratified_100_follows_the_budget_exactly_when_every_share_clears_the_floor():
    assert allocate(100, {s: 1000 for s in SIX}, SIX) == SIX
    plan = plan_allocation(100, {s: 1000 for s in SIX}, SIX)
    assert plan.counts == {"a": 40, "b": 20, "c": 15, "d": 10, "e": 10, "f": 5}
    assert (plan.exact, plan.raised, plan.short, plan.follows_budget) == (plan.counts, (), (), True)
    assert budget_weights(plan.counts, plan.shares) == {s: 1.0 for s in SIX}


def test_a_floor_that_changes_the_shares_is_named_and_weighted_back():
    budget = {"big": 97, "mid": 2.5, "tiny": 0.5}
    plan = plan_allocation(40, {"big": 1000, "mid": 1000, "tiny": 1000}, budget, floor=2)
    # Exact shares 38.8 / 1.0 / 0.2 give 39 / 1 / 0; the floor of 2 lifts mid and tiny, big pays.
    assert (plan.exact, plan.counts) == ({"big": 39, "mid": 1, "tiny": 0}, {"big": 36, "mid": 2, "tiny": 2})
    assert (plan.raised, plan.short, plan.follows_budget) == (("mid", "tiny"), (), False)
    assert budget_weights(plan.counts, plan.shares) == pytest.approx(
        {"big": 0.97 / (36 / 40), "mid": 0.025 / (2 / 40), "tiny": 0.005 / (2 / 40)}
    )


def test_a_stratum_short_of_its_share_is_named():
    plan = plan_allocation(100, {"a": 50, "b": 50, "c": 5}, {"a": 50, "b": 30, "c": 20})
    assert (plan.counts, plan.exact, plan.raised, plan.short) == (
        {"a": 50, "b": 45, "c": 5},
        {"a": 50, "b": 30, "c": 20},
        (),
        ("c",),
    )
