"""The judge version page lists its disagreements a page at a time, filtered by stratum and direction,
under the summary charts."""

import re

import pytest

from calibration.models import Verdict
from calibration.selectors.diagnostics import disagreements
from calibration.services.judges import judge_version_create
from tests.machine_numbers import assert_machine_numbers_plain, page_in_german

PER_PAGE = 2  # the page's 25, made small so the world's few disagreements span pages


def rows(html: str) -> list[tuple[str, str, str]]:
    """(stratum, human, judge) of each disagreement row shown."""
    found = re.findall(
        r'<tr data-testid="disagreement">.*?<span class="muted">([^<]*)</span></td>.*?<td>[^<]*</td><td class="nowrap">(\w+)</td>'
        r'<td class="nowrap"><span class="badge [a-z]+">(\w+)</span>',
        html,
        flags=re.S,
    )
    return [(s, h, j) for s, h, j in found]


@pytest.mark.django_db
def test_disagreements_page_and_filter(world, run_inline, client, make_user, monkeypatch):
    monkeypatch.setattr("calibration.views.judges.DISAGREEMENTS_PER_PAGE", PER_PAGE)
    version, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10)
    run = run_inline(version, size=60)
    # The span judge here only ever passes what the humans failed; three of its agreements turned the other
    # way give the list both directions to filter.
    agreed = Verdict.objects.filter(run=run, verdict="correct", human_verdict="correct").order_by("pk")[:3]
    Verdict.objects.filter(pk__in=[v.pk for v in agreed]).update(verdict="incorrect")
    everything = disagreements(version.measurements.get())
    assert len(everything) > PER_PAGE  # the world's judge disagrees often enough to page
    client.force_login(make_user("eng", "engineer"))
    url = f"/judges/versions/{version.pk}/"

    first = client.get(url).content.decode()
    second = client.get(url + "?page=2").content.decode()

    assert len(rows(first)) == PER_PAGE
    assert len(rows(first)) + len(rows(second)) == min(len(everything), 2 * PER_PAGE)
    assert f"1–{PER_PAGE} of {len(everything)}" in first
    assert first.index("Human–human kappa") < first.index('id="h-dis"')  # the summary comes first
    assert 'rel="next" href="?page=2#h-dis"' in first

    kinds = {(d["judge"], d["human"]) for d in everything}
    assert {("correct", "incorrect"), ("incorrect", "correct")} <= kinds  # both directions are there to filter
    passes = client.get(url + "?direction=judge_passes").content.decode()
    expected = [d for d in everything if (d["judge"], d["human"]) == ("correct", "incorrect")]
    assert 0 < len(expected) < len(everything)
    assert rows(passes) == [(d["stratum"], d["human"], d["judge"]) for d in expected][:PER_PAGE]

    stratum = next(d["stratum"] for d in everything if (d["judge"], d["human"]) == ("incorrect", "correct"))
    one = client.get(url + f"?stratum={stratum}&direction=judge_fails").content.decode()
    expected = [
        d for d in everything if d["stratum"] == stratum and (d["judge"], d["human"]) == ("incorrect", "correct")
    ]
    assert expected
    assert rows(one) == [(d["stratum"], d["human"], d["judge"]) for d in expected][:PER_PAGE]

    assert client.get(url + "?page=lots").status_code == 400


@pytest.mark.django_db
def test_every_page_of_disagreements_walks_the_sample_in_order(world, run_inline, client, make_user, monkeypatch):
    # The pages, read one after another, are the disagreements read row by row in sample order, and a page
    # past the last shows the last.
    monkeypatch.setattr("calibration.views.judges.DISAGREEMENTS_PER_PAGE", PER_PAGE)
    version, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10)
    run = run_inline(version, size=60)
    agreed = Verdict.objects.filter(run=run, verdict="correct", human_verdict="correct").order_by("pk")[:3]
    Verdict.objects.filter(pk__in=[v.pk for v in agreed]).update(verdict="incorrect")
    expected = [
        (v.item.stratum, v.human_verdict, v.verdict)
        for v in Verdict.objects.filter(run=run).select_related("item").order_by("item__position", "pk")
        if v.human_verdict and v.verdict != v.human_verdict
    ]
    pages = -(-len(expected) // PER_PAGE)
    assert pages >= 3
    client.force_login(make_user("eng", "engineer"))
    url = f"/judges/versions/{version.pk}/"

    shown = [row for page in range(1, pages + 1) for row in rows(client.get(f"{url}?page={page}").content.decode())]

    assert shown == expected
    assert rows(client.get(f"{url}?page={pages + 5}").content.decode()) == expected[(pages - 1) * PER_PAGE :]


@pytest.mark.django_db
def test_the_version_pages_charts_draw_in_german_too(world, run_inline, client, make_user):
    """The kappa scale, the baselines, the confusion heatmap, the strata and the history: SVG numbers, never
    a locale's (German writes the kappa's position 212,5, which draws nothing)."""
    version, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10)
    run_inline(version, size=60)
    client.force_login(make_user("eng", "engineer"))
    html = page_in_german(client, f"/judges/versions/{version.pk}/")
    assert html.count("<svg") >= 5
    assert_machine_numbers_plain(html, at_least=60)
