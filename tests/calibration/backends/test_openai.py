"""The openai backend against a local OpenAI-compatible server: real socket, real protocol."""

import pytest

from calibration.backends import JudgeItem, TransientJudgeError, backend_for
from calibration.backends.openai import parse_verdict
from calibration.backends.runner import RetryPolicy, judge_items
from calibration.models import Verdict
from calibration.selectors.gates import judge_gate
from calibration.services.calibration import calibration_resume, calibration_start, pending_item_ids
from calibration.services.judges import judge_version_create

ITEM = JudgeItem(
    run_id="r",
    qid="q",
    question="how long?",
    answer="It is 30 days.",
    expected="30 days",
    gold_text="Trials run for 30 days.",
)


def backend(server, **params):
    return backend_for("openai", model="judge-1", params={"base_url": server.url, **params})


@pytest.mark.parametrize(
    "content, verdict",
    [
        ('{"verdict": "correct"}', "correct"),
        ('```json\n{"verdict": "Incorrect", "reason": "x"}\n```', "incorrect"),
        ('Sure! {"verdict": "correct"} hope that helps', "correct"),
        ('{"correct": false}', "incorrect"),
        ('{"verdict": "maybe"}', "invalid"),
        ("correct", "invalid"),
        ("", "invalid"),
        (None, "invalid"),
    ],
)
def test_parse_verdict(content, verdict):
    assert parse_verdict(content) == verdict


def test_verdict_tokens_and_latency_from_the_server(judge_server, settings):
    settings.JUDGE_OPENAI_API_KEY = "sk-test"
    b = backend(judge_server)
    result = b.judge(ITEM)
    assert result.verdict == "correct"
    assert result.raw_output.startswith('{"verdict": "correct"')
    assert result.prompt_tokens > 0 and result.completion_tokens > 0 and result.latency_ms > 0
    assert judge_server.auth_headers == ["Bearer sk-test"]
    b.close()


def test_malformed_body_and_unparseable_reply_are_invalid_never_incorrect(judge_server):
    b = backend(judge_server)
    malformed = b.judge(JudgeItem(**{**ITEM.__dict__, "answer": "30 days [[MALFORMED]]"}))
    garbage = b.judge(JudgeItem(**{**ITEM.__dict__, "answer": "30 days [[GARBAGE]]"}))
    assert (malformed.verdict, garbage.verdict) == ("invalid", "invalid")
    assert malformed.raw_output == "<html>upstream proxy error</html>"
    assert garbage.raw_output == "I think the answer is probably fine, but I am not sure."


def test_429_and_500_raise_transient_and_are_retried(judge_server):
    judge_server.fail_429, judge_server.fail_500 = 1, 1
    b = backend(judge_server)
    with pytest.raises(TransientJudgeError) as first:
        b.judge(ITEM)
    assert first.value.status == 429 and first.value.retry_after == 0
    judge_server.fail_429, judge_server.fail_500 = 2, 2
    outcomes = judge_items(b, [("k", ITEM)], retry=RetryPolicy(attempts=6, base=0.01, cap=0.02))
    assert outcomes[0].result.verdict == "correct" and outcomes[0].attempts == 5
    assert judge_server.requests == 1 + 5


def test_timeouts_are_transient_and_end_as_errors_after_the_last_attempt(judge_server):
    judge_server.hang, judge_server.hang_seconds = 10, 1.0
    b = backend(judge_server, timeout=0.2)
    outcomes = judge_items(b, [("k", ITEM)], retry=RetryPolicy(attempts=2, base=0.01, cap=0.02))
    assert outcomes[0].result is None and outcomes[0].transient
    assert "timeout" in outcomes[0].error


def test_calibration_with_the_openai_backend_counts_invalid_and_shows_it(db, tmp_path, judge_server, run_inline):
    from tests.calibration.world import load_world

    load_world(tmp_path / "w", n=30, markers={2: "[[GARBAGE]]", 4: "[[MALFORMED]]"})
    v, _ = judge_version_create(
        judge_name="llm",
        backend="openai",
        model="judge-1",
        min_n=10,
        params={"base_url": judge_server.url, "concurrency": 4},
    )
    run = run_inline(v, size=30)
    assert run.status == "done"
    gate = judge_gate(v)
    assert gate["invalid"] == 2
    assert gate["n"] == 30
    assert gate["confusion"]["correct/invalid"] + gate["confusion"]["incorrect/invalid"] == 2
    assert Verdict.objects.filter(run=run, verdict="invalid").count() == 2
    # The judge output is kept with every verdict.
    assert Verdict.objects.filter(run=run, raw_output="").count() == 0


def test_a_judge_that_stays_down_fails_the_run_and_resume_finishes_it(
    db, tmp_path, judge_server, django_capture_on_commit_callbacks
):
    from calibration import tasks
    from tests.calibration.world import load_world

    load_world(tmp_path / "w", n=12)
    v, _ = judge_version_create(
        judge_name="llm",
        backend="openai",
        model="judge-1",
        min_n=5,
        params={"base_url": judge_server.url, "max_attempts": 1},
    )
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(judge_version_id=v.pk, dataset_name="support", size=12, chunk_size=12)
    judge_server.fail_500 = 1000
    ids = pending_item_ids(run)
    tasks.judge_chunk.max_retries, saved = 0, tasks.judge_chunk.max_retries
    try:
        tasks.judge_chunk.apply(args=(run.pk, ids), throw=True)
    finally:
        tasks.judge_chunk.max_retries = saved
    run.refresh_from_db()
    assert run.status == "failed" and "12 of 12 item(s) could not be judged" in run.message
    assert judge_gate(v)["status"] == "unmeasured"
    judge_server.fail_500 = 0
    with django_capture_on_commit_callbacks(execute=False):
        calibration_resume(run_id=run.pk)
    tasks.judge_chunk.apply(args=(run.pk, pending_item_ids(run)), throw=True)
    run.refresh_from_db()
    assert run.status == "done"
    assert Verdict.objects.filter(run=run).count() == 12
    assert judge_gate(v)["n"] == 12


def test_judge_calls_rate_limits_and_retries_are_counted_for_metrics(judge_server):
    from prometheus_client import REGISTRY

    def value(name, **labels):
        return REGISTRY.get_sample_value(name, labels) or 0.0

    names = (
        ("evalapp_judge_calls_total", {"backend": "openai", "outcome": "ok"}),
        ("evalapp_judge_calls_total", {"backend": "openai", "outcome": "transient"}),
        ("evalapp_judge_calls_total", {"backend": "openai", "outcome": "invalid"}),
        ("evalapp_judge_rate_limited_total", {"backend": "openai"}),
        ("evalapp_judge_retries_total", {"backend": "openai"}),
    )
    before = [value(n, **labels) for n, labels in names]
    judge_server.fail_429, judge_server.fail_500 = 2, 1
    b = backend(judge_server)
    garbage = JudgeItem(**{**ITEM.__dict__, "answer": "30 days [[GARBAGE]]"})
    judge_items(b, [("k", ITEM), ("g", garbage)], retry=RetryPolicy(attempts=6, base=0.01, cap=0.02))
    after = [value(n, **labels) for n, labels in names]
    # Three transient answers (two 429s, one 500), each retried; then one good verdict and one invalid.
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 3, 1, 2, 3]
