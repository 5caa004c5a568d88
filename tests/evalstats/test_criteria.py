import pytest

from evalstats.criteria import BINARY_VALUES, DefinitionError, definition

FIVE = ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize(
    ("rule", "passing"),
    [
        (">=4", {"4", "5"}),
        ("> 4", {"5"}),
        ("<= 2", {"1", "2"}),
        ("<2", {"1"}),
        ("== 3", {"3"}),
        ("in 1|5", {"1", "5"}),
        ("", None),
    ],
)
def test_an_ordinal_rule_passes_the_values_it_names_by_their_order(rule, passing):
    d = definition("faithfulness", "ordinal", FIVE, rule)
    assert d.passing == (frozenset(passing) if passing is not None else None)
    assert d.values == tuple(FIVE) and d.rank("1") == 0 and d.rank("5") == 4


def test_order_is_the_given_order_not_the_sorted_one():
    d = definition("quality", "ordinal", ["poor", "fair", "good"], ">= fair")
    assert d.passing == {"fair", "good"}  # sorted, "fair" < "good" < "poor" would pass "poor" too
    assert d.passes("good") and not d.passes("poor")


def test_binary_is_todays_verdict_and_takes_no_rule():
    d = definition("verdict", "binary", None)
    assert d.values == BINARY_VALUES and d.passing == {"correct"}
    with pytest.raises(DefinitionError) as exc:
        definition("verdict", "binary", None, ">= correct")
    assert exc.value.problems == [("pass", "a binary criterion passes 'correct'; it takes no rule")]


def test_a_categorical_rule_names_values_and_refuses_an_order():
    assert definition("tone", "categorical", ["rude", "neutral", "kind"], "in neutral|kind").passing == {
        "neutral",
        "kind",
    }
    with pytest.raises(DefinitionError) as exc:
        definition("tone", "categorical", ["rude", "neutral", "kind"], ">= neutral")
    assert exc.value.problems[0][0] == "pass" and "values have none" in exc.value.problems[0][1]


@pytest.mark.parametrize(
    ("args", "field", "words"),
    [
        (("Bad Name", "ordinal", FIVE, ""), "criterion", "lower-case"),
        (("f", "scale", FIVE, ""), "kind", "not one of binary, categorical, ordinal"),
        (("f", "ordinal", ["1"], ""), "values", "at least two values"),
        (("f", "ordinal", ["1", "2", "1"], ""), "values", "given twice: 1"),
        (("f", "ordinal", ["1", ""], ""), "values", "non-empty"),
        (("f", "binary", ["yes", "no"], ""), "values", "exactly correct,incorrect"),
        (("f", "ordinal", FIVE, ">= 6"), "pass", "'6' is not one of the values"),
        (("f", "ordinal", FIVE, "about 4"), "pass", "is not a rule"),
        (("f", "ordinal", FIVE, "> 5"), "pass", "passes no value"),
        (("f", "categorical", ["a|b", "c"], ""), "values", "no ',' or '|'"),
    ],
)
def test_a_bad_definition_names_the_field_and_what_is_wrong(args, field, words):
    with pytest.raises(DefinitionError) as exc:
        definition(*args)
    assert [f for f, _m in exc.value.problems] == [field]
    assert words in exc.value.problems[0][1]


def test_passes_refuses_a_value_outside_the_definition_and_a_rule_that_is_not_there():
    d = definition("f", "ordinal", FIVE, ">=4")
    with pytest.raises(ValueError, match="'6' is not a value of 'f'"):
        d.passes("6")
    with pytest.raises(ValueError, match="no pass rule"):
        definition("f", "ordinal", FIVE).passes("4")


def test_values_agree_when_equal_or_within_the_ordinal_tolerance():
    from evalstats.criteria import agreed_value, in_agreement

    scale = definition("faithfulness", "ordinal", FIVE)
    tone = definition("tone", "categorical", ["rude", "neutral", "kind"])
    assert [in_agreement(scale, v, t) for v, t in [(["3", "3"], 0), (["3", "4"], 0), (["3", "4"], 1)]] == [
        True,
        False,
        True,
    ]
    assert in_agreement(scale, ["2", "4"], 1) is False and in_agreement(scale, ["2", "3", "4"], 2) is True
    assert in_agreement(tone, ["rude", "kind"], 3) is False and in_agreement(scale, [], 0) is True
    assert agreed_value(scale, ["4", "3"], 1) == "3"
    assert agreed_value(scale, ["4", "4"], 0) == "4"
    assert agreed_value(scale, ["5", "3"], 1) is None
    assert agreed_value(tone, ["kind", "kind"], 0) == "kind"
    assert agreed_value(scale, [], 1) is None
