"""The comparison pages' charts draw in any language: their SVG numbers are SVG's, never a locale's."""

import re

import pytest

from tests.comparisons.support import build_series
from tests.machine_numbers import assert_machine_numbers_plain, page_in_german

pytestmark = pytest.mark.django_db


@pytest.fixture
def german_engineer(client, make_user, tmp_path):
    build_series(tmp_path)
    client.force_login(make_user("eng", "engineer"))

    def get(path: str, **params) -> str:
        return page_in_german(client, path, params)

    return get


def test_series_chart_coordinates_are_never_localised(german_engineer):
    """German writes 0,5 for a half: a circle at cx="381,5" is no point at all. The polyline joins the same
    points the circles mark."""
    page = german_engineer("/series/", dataset="support")
    assert_machine_numbers_plain(page, at_least=30)
    circles = re.findall(r'<circle cx="([^"]*)" cy="([^"]*)"', page)
    assert len(circles) == 5  # r1..r5
    points = sorted((float(x), float(y)) for x, y in circles)
    polylines = re.findall(r'<polyline points="([^"]*)"', page)
    assert sorted(tuple(float(v) for v in pair.split(",")) for line in polylines for pair in line.split()) == points


@pytest.mark.parametrize(
    ("path", "params", "at_least"),
    [("/compare/", {"a": "r4", "b": "r5"}, 20), ("/runs/r4/", {}, 8)],
    ids=["compare", "run detail"],
)
def test_the_other_charts_draw_in_german_too(german_engineer, path, params, at_least):
    assert_machine_numbers_plain(german_engineer(path, **params), at_least=at_least)
