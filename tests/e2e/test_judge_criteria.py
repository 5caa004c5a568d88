"""A judge version that scores criteria, in Chromium: the version page's criteria table at two widths."""

import pytest
from playwright.sync_api import expect

from calibration import tasks
from calibration.services.calibration import calibration_start, pending_item_ids
from calibration.services.judges import judge_version_create
from calibration.services.verdicts import verdicts_import
from tests.calibration.services.test_judge_criteria import verdict_lines
from tests.calibration.world import load_world
from tests.conftest import write_jsonl

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_version_page_shows_each_criterion(page, live_server, login, make_user, tmp_path, screenshot_dir, monkeypatch):
    from annotation.services.criteria import criterion_set
    from annotation.services.label_import import labels_import
    from calibration.services import engine
    from tests.calibration.services.test_judge_criteria import SCALE, human_faith, human_tone

    load_world(tmp_path / "w", n=60)
    criterion_set(dataset_name="support", name="faithfulness", kind="ordinal", values=SCALE, pass_rule=">=4")
    criterion_set(dataset_name="support", name="tone", kind="categorical", values=["rude", "neutral", "kind"])
    lines = [
        {"run_id": "run-a", "qid": f"q-{i:04d}", "annotator": "ann-a", "labelled_at": "2026-06-09T10:00:00Z", **kv}
        for i in range(60)
        for kv in (
            {"criterion": "faithfulness", "value": human_faith(i)},
            {"criterion": "tone", "value": human_tone(i)},
        )
    ]
    labels_import(path=write_jsonl(tmp_path / "c.jsonl", lines))
    v, _ = judge_version_create(
        judge_name="external",
        backend="replay",
        min_n=10,
        criteria=[{"name": "faithfulness", "threshold": 0.5}, {"name": "tone", "threshold": None}],
    )
    verdicts_import(path=write_jsonl(tmp_path / "v.jsonl", verdict_lines()), judge_version_id=v.pk)
    monkeypatch.setattr(engine, "dispatch_on_commit", lambda **_kw: None)
    run, _ = calibration_start(judge_version_id=v.pk, dataset_name="support", size=60, chunk_size=60)
    tasks.judge_chunk.apply(args=(run.pk, pending_item_ids(run)), throw=True)

    make_user("eng", "engineer", password="pw-engineer")
    login(page, "eng", "pw-engineer")
    for width in (1280, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/judges/versions/{v.pk}/")
        expect(page.get_by_test_id("gate-status")).to_have_text("pass")
        faith = page.get_by_test_id("criterion-faithfulness")
        expect(faith).to_contain_text("pass")
        expect(faith).to_contain_text("(quadratic)")
        expect(page.get_by_test_id("criterion-tone")).to_contain_text("not gated")
        page.get_by_test_id("criteria").scroll_into_view_if_needed()
        # No horizontal scroll: the table fits the page at both widths.
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        page.get_by_test_id("criteria").screenshot(path=str(screenshot_dir / f"judge-criteria-{width}.png"))
