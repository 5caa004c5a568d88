"""Chart geometry prints numbers with the pages' one rounding: a bound the chart labels and the table
prints is the same string (Python's own format rounds halves to even and printed -1.2 beside -1.3)."""

import pytest
from django.template.defaultfilters import floatformat

from comparisons.charts import fixed, interval_chart

VALUES = [-1.25, 1.25, -0.05, 0.05, 0.15, 2.675, -2.675, 12.35, -0.04, -0.0, 0.0, 1e-9, 99.95, -3.0]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("digits", [1, 2, 3])
def test_fixed_is_floatformat(value, digits):
    assert fixed(value, digits) == floatformat(value, digits)


def test_the_chart_labels_a_bound_as_the_table_prints_it():
    cmp = {"ci95": [-1.25, 3.15], "naive_ci95": [-2.05, 4.35], "diff_points": 0.95, "resolvable_gap_points": 2.5}
    rows = interval_chart(cmp)["rows"]
    assert [r["text"] for r in rows] == ["[-1.3, 3.2]", "[-2.1, 4.4]"]
    table = f"[{floatformat(cmp['ci95'][0], 1)}, {floatformat(cmp['ci95'][1], 1)}]"
    assert rows[0]["text"] == table
    assert (f"{-1.25:.1f}", fixed(-1.25, 1)) == ("-1.2", "-1.3")  # what the chart printed before
