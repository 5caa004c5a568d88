"""The judge pages in Chromium: a version's evidence, and a run's progress refreshing live."""

import re

import pytest
from playwright.sync_api import expect

from calibration import tasks
from calibration.services import engine
from calibration.services.calibration import calibration_start, pending_item_ids
from calibration.services.judges import judge_version_create
from tests.calibration.world import load_world
from tests.e2e.shots import SCREENSHOTS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def preview(page):
    """Press Preview once htmx has taken the page over: the button posts through htmx only (it has no
    form to fall back on), so a click between the navigation and htmx's start does nothing."""
    page.wait_for_load_state("load")
    page.wait_for_function("() => window.htmx !== undefined && document.readyState === 'complete'")
    page.click("button:has-text('Preview')")


@pytest.fixture
def eager():
    """Page tests do not test Celery (tests/celery does): tasks sent by the pages run in this process."""
    from evalapp.celery import app

    saved = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = saved


def test_version_page_shows_the_evidence(page, live_server, login, make_user, tmp_path, eager, screenshot_dir):
    load_world(tmp_path / "w", n=60)
    v, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.5)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.click("text=Judges")
    expect(page.get_by_test_id(f"status-{v.pk}")).to_have_text("unmeasured")
    page.click(f"a[href='/judges/versions/{v.pk}/']")
    page.select_option("select[name=dataset]", "support")
    page.fill("input[name=sample]", "30")
    page.click("button:has-text('Calibrate')")
    expect(page.get_by_test_id("run-status")).to_have_text("done")
    page.click("text=See the measurement and the gate")
    expect(page.get_by_test_id("gate-status")).to_have_text("pass")
    expect(page.get_by_test_id("kappa")).to_have_text(re.compile(r"^0\.\d{3}$"))
    expect(page.get_by_test_id("ceiling")).to_have_text("1.000")
    assert page.get_by_test_id("disagreement").count() > 0
    assert page.locator("svg[aria-label='kappa by version with the threshold line'] circle").count() == 1
    page.screenshot(path=str(screenshot_dir / "judge-version.png"), full_page=True)


def test_progress_page_refreshes_while_the_run_goes(
    page, live_server, login, make_user, tmp_path, monkeypatch, screenshot_dir
):
    load_world(tmp_path / "w", n=30)
    v, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10)
    monkeypatch.setattr(engine, "dispatch_on_commit", lambda **_kw: None)  # the test plays the worker below
    run, _ = calibration_start(judge_version_id=v.pk, dataset_name="support", size=20, chunk_size=10)
    make_user("eng", "engineer", password="pw-engineer")  # judge pages are the engineers'
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/runs/{run.pk}/")
    expect(page.get_by_test_id("done")).to_have_text("0 / 20")
    pending = pending_item_ids(run)
    tasks.judge_chunk.apply(args=(run.pk, pending[:10]), throw=True)
    expect(page.get_by_test_id("done")).to_have_text("10 / 20", timeout=10_000)
    page.screenshot(path=str(screenshot_dir / "calibration-progress.png"), full_page=True)
    tasks.judge_chunk.apply(args=(run.pk, pending[10:]), throw=True)
    expect(page.get_by_test_id("run-status")).to_have_text("done", timeout=10_000)
    expect(page.get_by_test_id("done")).to_have_text("20 / 20")


PROMPT = "Question: $question\nGold passage: $gold_text\nAnswer to grade: $answer\nReply with JSON."


WIDER = """() => {
  const width = document.documentElement.clientWidth;
  return [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > width + 1)
    .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}.${[...e.classList].join(".")}`);
}"""


def no_sideways_scroll(page) -> list[str]:
    """The first elements reaching past the right edge (none: the page does not scroll sideways)."""
    return page.evaluate(WIDER)


def test_an_engineer_creates_a_version_in_the_browser_after_previewing_its_prompt(
    page, live_server, login, make_user, tmp_path, settings, screenshot_dir
):
    from calibration.models import JudgeVersion

    settings.JUDGE_ALLOWED_BASE_URLS = ["http://127.0.0.1:8001/v1"]
    load_world(tmp_path / "w", n=30)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.click("text=Judges")
    page.click("text=New judge")
    page.get_by_label("Judge name").fill("faithfulness")
    page.get_by_label("Backend").select_option("openai")
    page.get_by_label("Model").fill("qwen2.5-7b")
    page.get_by_label("Kappa threshold").fill("0.6")
    page.get_by_label("Parameters (a JSON object)").fill('{"base_url": "http://127.0.0.1:8001/v1", "max_tokens": 200}')
    page.get_by_label("Prompt template").fill(PROMPT)
    page.get_by_label("Question id").fill("q-0004")
    preview(page)

    expect(page.get_by_test_id("preview-user")).to_have_text(
        "Question: what is the code of item 4?\nGold passage: The code of item 4 is code 0004.\n"
        "Answer to grade: The code is code 0004.\nReply with JSON."
    )
    expect(page.get_by_test_id("preview-source")).to_have_text("answer of run run-a to q-0004 (stratum numeric)")
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert no_sideways_scroll(page) == [], width
        page.screenshot(path=str(screenshot_dir / f"judge-version-new-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.click("button:has-text('Create version')")

    expect(page.get_by_test_id("gate-status")).to_have_text("unmeasured")
    expect(page.locator(".messages")).to_have_text("Created faithfulness v1; it starts unmeasured: calibrate it.")
    version = JudgeVersion.objects.get()
    assert (version.judge.name, version.backend, version.model, version.prompt_template, version.judge.threshold) == (
        "faithfulness",
        "openai",
        "qwen2.5-7b",
        PROMPT,
        0.6,
    )
    assert version.params == {"base_url": "http://127.0.0.1:8001/v1", "max_tokens": 200}
    assert page.url == f"{live_server.url}/judges/versions/{version.pk}/"


def test_bad_parameters_and_an_unknown_placeholder_say_so_and_write_nothing(
    page, live_server, login, make_user, tmp_path, screenshot_dir
):
    from calibration.models import Judge, JudgeVersion

    load_world(tmp_path / "w", n=30)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/new/")
    page.get_by_label("Judge name").fill("faithfulness")
    page.get_by_label("Prompt template").fill("Question: $question\nAnswer: $anwser")
    preview(page)
    expect(page.get_by_test_id("preview-error")).to_have_text(
        "the prompt template line 2, column 9: unknown placeholder $anwser (known: $question, $answer, $expected, "
        "$gold_text, $stratum; write $$ for a dollar sign)."
    )

    page.get_by_label("Prompt template").fill("Question: $question\nAnswer: $answer")
    page.get_by_label("Parameters (a JSON object)").fill('{"max_tokens": 200,}')
    page.click("button:has-text('Create version')")

    expect(page.get_by_test_id("form-error")).to_have_text(
        "Cannot create the judge version: the parameters are not valid JSON (Expecting property name enclosed in "
        "double quotes at line 1, column 20); nothing was written."
    )
    expect(page.get_by_label("Parameters (a JSON object)")).to_have_value('{"max_tokens": 200,}')
    expect(page.get_by_label("Prompt template")).to_have_value("Question: $question\nAnswer: $answer")
    assert (Judge.objects.count(), JudgeVersion.objects.count()) == (0, 0)
    page.screenshot(path=str(screenshot_dir / "judge-version-new-error.png"), full_page=True)


def test_the_demo_judge_has_a_gate_with_its_kappa_and_disagreements(page, live_server, login, screenshot_dir):
    from io import StringIO

    from django.core.management import call_command

    from calibration.models import JudgeVersion

    call_command("seed_demo", stdout=StringIO())
    version = JudgeVersion.objects.get(judge__name="stdlib-span")
    login(page, "engineer", "demo-engineer")
    page.click("text=Judges")
    expect(page.get_by_test_id(f"status-{version.pk}")).to_have_text("fail")
    page.click(f"a[href='/judges/versions/{version.pk}/']")

    expect(page.get_by_test_id("gate-status")).to_have_text("fail")
    expect(page.get_by_test_id("kappa")).to_have_text("0.185")
    expect(page.get_by_test_id("disagreement-range")).to_have_text("1–25 of 51")
    assert page.get_by_test_id("disagreement").count() == 25
    assert page.locator("svg[aria-label='kappa by version with the threshold line'] circle").count() == 1
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert no_sideways_scroll(page) == [], width
        page.screenshot(path=str(screenshot_dir / f"demo-judge-version-{width}.png"), full_page=True)
        page.screenshot(path=str(screenshot_dir / f"demo-judge-version-{width}-top.png"))
        page.locator("#h-dis").scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / f"demo-judge-version-{width}-disagreements.png"))
        page.evaluate("window.scrollTo(0, 0)")
    page.click("text=New version from this one")
    expect(page.get_by_label("Judge name")).to_have_value("stdlib-span")
    preview(page)
    expect(page.get_by_test_id("preview-source")).to_contain_text("item 1 of stdlib-span's calibration sample")
    page.screenshot(path=str(screenshot_dir / "demo-judge-version-new.png"), full_page=True)


def test_version_page_warns_of_a_small_skewed_sample_and_shows_the_conservative_kappa(
    page, live_server, login, make_user, screenshot_dir
):
    from typing import cast

    from django.utils import timezone

    from annotation.models import Dataset
    from calibration.models import CalibrationRun, CalibrationSample, Measurement
    from tests.factories import DatasetFactory

    v, _ = judge_version_create(judge_name="span-judge", backend="span", threshold=0.3)
    sample = CalibrationSample.objects.create(judge=v.judge, dataset=cast(Dataset, DatasetFactory()), size=30, seed=0)
    run = CalibrationRun.objects.create(judge_version=v, sample=sample, status="done", total=30)
    # 30 items, 90% on "correct": 2 invalid judge outputs on items the humans call correct.
    table = [[24, 1, 2], [1, 2, 0], [0, 0, 0]]
    Measurement.objects.create(
        judge_version=v,
        run=run,
        n=30,
        labels=["correct", "incorrect", "invalid"],
        confusion=table,
        strata={"policy_lookup": table},
        bootstrap_ci95=[0.1, 0.9],
        invalid=2,
        measured_at=timezone.now(),
    )
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/versions/{v.pk}/")
    warning = page.get_by_test_id("coverage-warning")
    expect(warning).to_contain_text("Small or skewed sample.")
    expect(warning).to_contain_text(
        "only about 4 item(s) off the most common label 'correct', which has 87% of the labels"
    )
    expect(warning).to_contain_text("gate on the interval's lower bound (policy lower_bound)")
    assert page.get_by_text("only about 4 item(s) off").count() == 1  # not repeated among the other warnings
    expect(page.get_by_test_id("kappa-conservative")).to_contain_text("The gate decides on the conservative kappa")
    expect(page.get_by_test_id("kappa-conservative")).to_contain_text("the 2 invalid judge outputs count as the label")
    page.goto(f"{live_server.url}/judges/")
    expect(page.get_by_test_id(f"kappa-{v.pk}")).to_have_text("0.429")
    expect(page.get_by_test_id(f"kappa-note-{v.pk}")).to_have_text(
        "v1: kappa counts its 2 invalid outputs as disagreements (the conservative figure the gate decides on). "
        "The sample is too small or too skewed for its kappa interval to be trusted; see the version."
    )
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert no_sideways_scroll(page) == [], width
        page.screenshot(path=str(screenshot_dir / f"judge-list-coverage-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/judges/versions/{v.pk}/")
    # The scale marks the figure the gate decided on: [[24, 3], [1, 2]] gives 0.43.
    expect(page.get_by_test_id("kappa-scale")).to_have_attribute(
        "aria-label", "conservative kappa 0.43 with its interval, threshold 0.3"
    )
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert no_sideways_scroll(page) == [], width
        page.screenshot(path=str(screenshot_dir / f"judge-version-coverage-{width}.png"), full_page=True)


def test_the_ceiling_counts_unresolved_disagreements(page, live_server, login, make_user, tmp_path, eager):
    from annotation.services.label_import import labels_import
    from tests.calibration.world import human_verdict
    from tests.conftest import write_jsonl

    load_world(tmp_path / "w", n=60)
    make_user("ann-c", "annotator")
    lines = [
        {
            "run_id": "run-a",
            "qid": f"q-{i:04d}",
            "annotator": "ann-c",
            "verdict": "correct" if human_verdict(i) == "incorrect" else "incorrect",
        }
        for i in (12, 40)
    ]
    labels_import(path=write_jsonl(tmp_path / "third.jsonl", lines))
    v, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.5)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/versions/{v.pk}/")
    page.select_option("select[name=dataset]", "support")
    page.fill("input[name=sample]", "60")
    page.click("button:has-text('Calibrate')")
    expect(page.get_by_test_id("run-status")).to_have_text("done")
    page.click("text=See the measurement and the gate")
    # 58 sampled answers agree; the 2 disputed ones add 4 disagreeing label pairs out of 6.
    expect(page.get_by_test_id("ceiling")).not_to_have_text("1.000")
    expect(page.get_by_test_id("ceiling-unresolved")).to_have_text("2 of them unresolved disagreements")
    # Those two carry three labels each: Krippendorff's alpha over them is -1/9.
    expect(page.get_by_test_id("ceiling-alpha")).to_have_text("-0.111")
    expect(page.get_by_test_id("ceiling-multi")).to_contain_text(
        "2 of these answers carry three or more human labels (3 annotators)"
    )
    expect(page.get_by_test_id("ceiling-multi")).to_contain_text("(too few answers for an interval)")
    shots = SCREENSHOTS / "backfill"
    shots.mkdir(parents=True, exist_ok=True)
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.get_by_test_id("ceiling").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"judge-version-ceiling-{width}.png"))


def test_a_sample_off_its_budget_says_so_on_the_version_page(page, live_server, login, make_user, tmp_path, eager):
    from tests.conftest import run_cmd

    load_world(tmp_path / "w", n=60)
    assert run_cmd("set_strata", "--dataset", "support", "policy_lookup=98", "numeric=1", "howto=1")[0] == 0
    v, _ = judge_version_create(judge_name="span-judge", backend="span", min_n=10, threshold=0.5)
    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    page.goto(f"{live_server.url}/judges/versions/{v.pk}/")
    page.select_option("select[name=dataset]", "support")
    page.fill("input[name=sample]", "20")
    page.click("button:has-text('Calibrate')")
    expect(page.get_by_test_id("run-status")).to_have_text("done")
    page.click("text=See the measurement and the gate")
    # 20 on 98/1/1: the budget's shares are 20/0/0; the floor of one answer drew 18/1/1.
    warning = page.locator("p.warn", has_text="The sample does not follow the strata budget")
    expect(warning).to_contain_text(
        "(the floor of one answer per stratum raised howto, numeric): howto drew 1 (budget share 0), "
        "numeric drew 1 (budget share 0), policy_lookup drew 18 (budget share 20); weighted back to the budget"
    )
    shots = SCREENSHOTS / "runsamp"
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(shots / f"judge-version-weighting-{width}.png"))
