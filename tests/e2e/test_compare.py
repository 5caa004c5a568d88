"""The comparison and series pages in real Chromium: intervals, regressions opened one by one, a broken series."""

from pathlib import Path

import pytest

from tests.comparisons.support import (
    build_300,
    build_judge_series,
    build_rated_criteria,
    build_rechunk,
    build_series,
    build_stratum_regression,
    import_run,
    qids,
    run_command,
    write_jsonl,
)
from tests.e2e.shots import SCREENSHOTS

SHOTS = SCREENSHOTS / "paired"


def _shoot(page, name: str, shots: Path = SHOTS):
    """Screenshots at 1280 and 800 px wide; at 800 px nothing scrolls sideways."""
    shots.mkdir(parents=True, exist_ok=True)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), width
    page.set_viewport_size({"width": 1280, "height": 900})


pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_comparison_page_shows_both_intervals_and_opens_regressions(
    tmp_path, live_server, page, login, make_user, screenshot_dir
):
    _, a_only = build_300(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.click("nav >> text=Compare")
    page.fill("input[name=a]", "A")
    page.fill("input[name=b]", "B")
    with page.expect_navigation():
        page.click("button:has-text('Compare')")
    assert page.text_content("[data-testid=verdict-status]") == "clears both bars"
    assert page.text_content("[data-testid=n]").startswith("300")
    assert page.text_content("[data-testid=diff]").strip() == "8.0 points"
    assert page.text_content("[data-testid=b-only]") == "38"
    assert page.text_content("[data-testid=a-only]") == "14"
    assert page.text_content("[data-testid=ci95]").startswith("[3.3, 12.7]")
    assert page.text_content("[data-testid=naive]").startswith("[1.1, 14.9]")
    assert page.text_content("[data-testid=attribution]").startswith("prompt_hash: Only prompt_hash differs (p1 → p2)")
    chart = page.locator("[data-testid=interval-chart]")
    assert chart.locator("line.paired").count() == 1 and chart.locator("line.naive").count() == 1
    assert chart.locator("rect.band").count() == 1
    assert page.locator(".regressions details").count() == 14

    # Open the regressions one by one: each loads its question, gold passage and both answers.
    for qid in a_only[:2]:
        item = page.locator(f".regressions details[data-qid='{qid}']")
        item.locator("summary").click()
        detail = item.locator(f"[data-testid=question-{qid}]")
        detail.wait_for()
        assert f"question {qid}" in detail.text_content()
        assert "Gold passage" in detail.text_content()
        assert detail.locator(".answer.right").count() == 1 and detail.locator(".answer.wrong").count() == 1
        assert f"answer of rag-v1 to {qid}" in detail.locator(".answer.right").text_content()
    assert page.locator("[data-testid=stratum-how_to]").count() == 1

    # The planner on the page answers for another gap.
    page.fill(".planner-form input[name=gap]", "4")
    page.click(".planner-form button")
    page.locator("[data-testid=planner-n]").wait_for()
    assert page.text_content("[data-testid=planner-n]") == "417"
    page.screenshot(path=str(screenshot_dir / "compare.png"), full_page=True)


def test_series_page_breaks_the_line_and_explains_it(tmp_path, live_server, page, login, make_user, screenshot_dir):
    build_series(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.click("nav >> text=Series")
    chart = page.locator("[data-testid=series-chart]")
    chart.wait_for()
    # Four segments, never joined: one polyline each, three dashed breaks.
    assert chart.locator("g.segment").count() == 4
    assert chart.locator("g.segment polyline").count() == 4
    assert chart.locator("g.series-break").count() == 3
    assert chart.locator("g.segment[data-segment='0'] circle").count() == 2
    labels = chart.locator("text.break-label").all_text_contents()
    assert labels == ["break 1: dataset_hash", "break 2: dataset_hash", "break 3: evaluator_config_hash"]
    texts = page.locator("[data-testid=break-text]").all_text_contents()
    assert "dataset v1 → v2: +0 added, −0 removed, ~1 modified (10 → 10 examples)" in texts[0]
    assert "dataset v2 → v3: +2 added, −0 removed, ~0 modified (10 → 12 examples)" in texts[1]
    assert "evaluator config sha256:cfg1 → sha256:cfg2" in texts[2]
    page.screenshot(path=str(screenshot_dir / "series.png"), full_page=True)

    # Backfill: r1 and r2 re-scored onto v2 appear as hollow points in segment 2; r3 does not resolve onto v3.
    page.check("input[name=backfill]")
    with page.expect_navigation():
        page.click("button:has-text('Show')")
    assert chart.locator("g.segment[data-segment='1'] circle.backfilled").count() == 2
    assert chart.locator("g.segment[data-segment='2'] circle.backfilled").count() == 0
    assert page.locator("text=does not resolve: 2 unanswered").count() == 1
    page.screenshot(path=str(screenshot_dir / "series-backfill.png"), full_page=True)


def test_series_backfill_shows_the_gated_judge_and_the_questions_it_cannot_rescore(
    tmp_path, live_server, page, login, make_user
):
    from calibration.services.grading import grading_start

    judge = build_judge_series(tmp_path, calibrate=True)
    grading_start(judge_version_id=judge.pk, run_id="run-a", run_now=True)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/series/?dataset=support&backfill=1")
    page.locator("[data-testid=series-chart]").wait_for()
    assert page.locator("text=re-scored by span-judge v1 (gate passes): 11").count() == 1
    details = page.locator("[data-testid=not-rescored]")
    assert details.locator("summary").text_content() == "1 judge-graded question of run-a not re-scored"
    details.locator("summary").click()
    assert details.locator("li").all_text_contents() == [
        "q-0003: the question's expected answer changed and no verdict on the new expected exists"
    ]
    _shoot(page, "series-backfill-judge", SCREENSHOTS / "backfill")


def test_versions_page_ceiling_and_run_page_attribution(tmp_path, live_server, page, login, make_user, screenshot_dir):
    build_series(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/datasets/support/history/")
    ceiling = page.locator("[data-testid='ceiling-3-rag-v2']")
    assert "can lift the score to at most 0.833" in ceiling.text_content()
    assert "within the ceiling" in ceiling.text_content()
    assert "no relabel audit yet" in page.locator("[data-testid=version-2]").text_content()
    movement = page.locator("[data-testid='movement-2-rag-v2']").text_content()
    assert "r2 0.600 → r3 0.800" in movement and "on the 9 unchanged questions 0.667 → 0.778" in movement
    page.fill(".planner-form input[name=gap]", "10")
    page.click(".planner-form button")
    page.locator("[data-testid=planner-n]").wait_for()
    page.screenshot(path=str(screenshot_dir / "versions.png"), full_page=True)

    page.click("a:has-text('r3')")
    page.wait_for_url("**/runs/r3/")
    assert page.text_content("[data-testid=failing]") == "2"
    assert page.locator("[data-testid=cause-not_retrieved] td").nth(1).text_content() == "2"
    page.screenshot(path=str(screenshot_dir / "run.png"), full_page=True)


def test_versions_page_pairs_by_pinned_fields_and_reads_the_movement(tmp_path, live_server, page, login, make_user):
    v = build_series(tmp_path)
    # Another system whose run on v3 used another prompt: nothing of it is compared across v2 -> v3.
    for run_id, version, ids, prompt in (("o1", "v2", qids(10), "p1"), ("o2", "v3", qids(12), "p2")):
        import_run(
            tmp_path,
            run_id=run_id,
            system="other",
            dataset="support",
            dataset_hash=v[version]["dataset_hash"],
            correct=dict.fromkeys(ids, True),
            started_at="2026-06-06T02:00:00Z",
            prompt_hash=prompt,
        )
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/datasets/support/history/")
    assert page.text_content("[data-testid='unpaired-3-other']").strip() == (
        "other: no run on v2 and v3 agree on their pinned fields, so none is compared; "
        "o1 → o2 differ in prompt_hash (p1 → p2)."
    )
    assert page.locator("[data-testid='movement-3-other']").count() == 0
    assert "no run on v3 shares its pinned fields (differs in prompt_hash)" in page.text_content(
        "[data-testid='ceiling-3-other']"
    )
    # r3 -> r4 share their pins; r5 (another evaluator config) is not the one compared.
    assert "r3 0.800 → r4 0.750" in page.text_content("[data-testid='movement-3-rag-v2']")
    assert page.text_content("[data-testid='reading-2-rag-v2']").startswith(
        "On the 9 unchanged questions the score held within the 28.3-point run-to-run band (0.667 → 0.778, +11.1 points)."
    )
    assert page.text_content("[data-testid='modified-by-2']") == "changed: expected 1"
    _shoot(page, "versions", SCREENSHOTS / "history")


def test_run_page_after_a_rechunk_and_stale_gold_on_discordant_questions(tmp_path, live_server, page, login, make_user):
    v = build_rechunk(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/runs/A/")
    gone = page.locator("[data-testid=gold-gone]")
    assert [t.strip() for t in gone.all_text_contents()] == [
        "(gone; found by its text)",
        "(gone; none of the chunks it used matches by document and text)",
        "(gone; found by its document)",
    ]
    assert page.locator("[data-testid=cause-generation] td").nth(1).text_content() == "2"
    _shoot(page, "run-rechunk", SCREENSHOTS / "history")

    # The refunds paragraph is dropped: q-0001's gold is stale, and A and B answer it differently.
    doc = {"doc_id": "doc:P", "title": "Plans", "text": "Alpha intro.\n\nNew notice.\n\nTrials run thirty days."}
    run_command("import_corpus", str(write_jsonl(tmp_path / "corpus-3.jsonl", [doc])))
    import_run(
        tmp_path,
        run_id="B",
        system="s2",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        correct={"q-0000": False, "q-0001": True, "q-0002": False, "q-0003": False},
        started_at="2026-06-08T02:00:00Z",
    )
    page.goto(f"{live_server.url}/compare/?a=A&b=B")
    assert "1 on discordant questions, where a stale label can move the difference: q-0001" in page.text_content("body")
    _shoot(page, "compare-stale", SCREENSHOTS / "history")


def test_a_stratum_regression_is_shown_first(tmp_path, live_server, page, login, make_user):
    build_stratum_regression(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/compare/?a=A&b=B")
    alerts = page.locator("main [role=alert]")
    assert alerts.first.text_content().strip() == (
        "⚠ REGRESSION IN A STRATUM: no_answer -33.3 points [-50.0, -16.7]: B is worse than A there (the 95% "
        "interval lies wholly below zero), whatever the total (+8.0 points) says."
    )
    # Above the total's verdict, which clears both bars.
    assert page.evaluate(
        "document.querySelector('main [role=alert]').compareDocumentPosition("
        "document.querySelector('[data-testid=verdict]')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert page.text_content("[data-testid=verdict-status]") == "clears both bars"
    row = page.locator("[data-testid=stratum-no_answer]")
    assert row.get_attribute("class") == "regressed" and "regression" in row.text_content()
    assert page.locator("[data-testid=stratum-policy_lookup]").get_attribute("class") is None
    assert page.text_content("[data-testid=mcnemar-p]").startswith("0.0012")
    assert page.text_content("[data-testid=ci95-method]") == "percentile bootstrap"
    assert page.text_content("[data-testid=detectable]") == "6.7 points"
    assert "found only about half the time" in page.text_content("[data-testid=resolvable-note]")
    assert "found about half the time" in page.text_content("[data-testid=planner]")
    _shoot(page, "compare-stratum-regression")


def test_no_discordant_question_shows_the_score_interval(tmp_path, live_server, page, login, make_user):
    from tests.comparisons.support import import_questions, import_run, q, qids

    ids = qids(30)
    v = import_questions(tmp_path, "support", [q(i) for i in ids], "v1")
    for run_id, system in (("A", "rag-v1"), ("B", "rag-v2")):
        right = {i: n < 21 for n, i in enumerate(ids)}
        import_run(
            tmp_path, run_id=run_id, system=system, dataset="support", dataset_hash=v["dataset_hash"], correct=right
        )
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/compare/?a=A&b=B")
    assert page.text_content("[data-testid=ci95]").startswith("[-7.6, 7.6]")
    assert page.text_content("[data-testid=ci95-method]").startswith(
        "0 discordant questions (fewer than 10): the bootstrap of so few is degenerate, so the interval is "
        "Newcombe's hybrid score interval"
    )
    assert "resolves gaps of 0.0" not in page.text_content("[data-testid=verdict]")
    assert page.text_content("[data-testid=resolvable]").startswith(
        "unmeasured (no question answered differently, so the discordance it rests on is unmeasured"
    )
    assert page.locator("[data-testid=stratum-policy_lookup] sup").text_content() == "s"
    assert page.locator("[data-testid=stratum-policy_lookup] td").last.text_content() == "unmeasured"
    _shoot(page, "compare-no-discordance")


def test_comparison_page_shows_each_criterion(tmp_path, live_server, page, login, make_user):
    build_rated_criteria(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/compare/?a=A&b=B")
    rows = page.locator("[data-testid=criteria] tbody tr")
    assert rows.count() == 2
    tone = page.locator("[data-testid=criterion-tone] td")
    assert [tone.nth(i).inner_text() for i in (1, 2, 3, 4, 6)] == ["40", "2.00", "2.25", "0.25", "10 / 0 / 30"]
    faith = page.locator("[data-testid=criterion-faithfulness]")
    assert faith.locator("td").nth(1).inner_text() == "39"
    assert faith.locator("td").nth(7).inner_text().startswith(">= 4: ")
    page.locator("[data-testid=criteria]").scroll_into_view_if_needed()
    _shoot(page, "compare-criteria")


def test_a_published_figure_is_marked_flagged_and_corrected(tmp_path, live_server, page, login, make_user):
    from tests.comparisons.support import build_published, import_questions, q

    ids, _ = build_published(tmp_path)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/runs/A/")
    page.fill("input[name=shown_to]", "Q3 board deck")
    with page.expect_navigation():
        page.click("button:has-text('Mark as shown')")
    figure = page.locator("[data-testid=published-figure]")
    assert "comparable with the latest version" in figure.text_content()
    import_questions(tmp_path, "support", [q(i) for i in ids[5:]], "v2")
    page.goto(f"{live_server.url}/series/?dataset=support")
    assert page.text_content("[data-testid=published-flag]") == "not comparable"
    with page.expect_navigation():
        page.click("button:has-text('Record the correction')")
    assert "comparable 0.600 (n=15)" in page.text_content("[data-testid=published-correction]")
    assert page.url.endswith("/series/?dataset=support")
    _shoot(page, "published-series")
    page.goto(f"{live_server.url}/runs/A/")
    _shoot(page, "published-run")
