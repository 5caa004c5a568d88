"""`label_time`: --json prints what the API answers, the text lists each person, bad arguments exit 2
with a sentence and print no report."""

import io
import json

import pytest
from django.core.management import call_command

from tests.annotation.timing_world import queue_world, tagging_world

pytestmark = pytest.mark.django_db


def run(*args):
    """(exit code, stdout, stderr) of label_time."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("label_time", *args, stdout=out, stderr=err)
        code: int | str | None = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_the_json_equals_the_api_answer(api_client_for):
    tagging_world()
    queue = queue_world()
    api = api_client_for("eng", "engineer")
    for args, url in (
        (["--dataset", "timeset"], "/api/datasets/timeset/label-time/"),
        (["--queue", str(queue.pk)], f"/api/queues/{queue.pk}/label-time/"),
        (["--queue", str(queue.pk), "--min-seconds", "15"], f"/api/queues/{queue.pk}/label-time/?min_seconds=15"),
    ):
        code, out, err = run(*args, "--json")
        assert (code, err) == (0, "")
        assert json.loads(out) == api.get(url).json()


def test_the_text_names_each_person_and_the_sentence():
    tagging_world()
    code, out, _ = run("--dataset", "timeset")
    assert code == 0
    lines = out.splitlines()
    assert lines[:3] == [
        "Time per question, dataset timeset: 6 left",
        "The 6 untagged questions need about 6 min at the team's median (60 s a question).",
        "Left out of the figures: 2 questions at 0 s.",
    ]
    assert lines[4].split() == ["expert", "items", "timed", "median", "p90", "total", "left", "at", "their", "median"]
    assert lines[5].split()[:8] == ["eve", "5", "4", "45", "s", "85", "s", "220"]
    assert lines[5].endswith("5 min  (1 of 5 left out: 1 question at 0 s)")
    assert lines[7].startswith("ola") and "no timing: 1 question" in lines[7]
    assert lines[8].split()[:2] == ["(team)", "9"]


SECONDS = "error: bad option\n  field 'min_seconds': must be a number of seconds from 0 to 86400, not "


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "error: give --dataset NAME (tagging time) or --queue ID (labelling time)\n  field 'dataset/queue'"),
        (["--dataset", "timeset", "--queue", "1"], "error: give either --dataset or --queue, not both"),
        (["--dataset", "nope"], "error: unknown dataset 'nope'"),
        (["--queue", "999999"], "error: unknown queue '999999'"),
        (["--queue", "abc"], "error: unknown queue 'abc'"),
        (["--dataset", "timeset", "--min-seconds", "abc"], SECONDS + "'abc'"),
        (["--dataset", "timeset", "--min-seconds", "nan"], SECONDS + "nan"),
        (["--dataset", "timeset", "--min-seconds", "-1"], SECONDS + "-1"),
        (["--dataset", "timeset", "--min-seconds", "86401"], SECONDS + "86401"),
    ],
)
def test_bad_arguments_exit_2_with_a_sentence(args, message):
    tagging_world()
    code, out, err = run(*args)
    assert code == 2
    assert err.startswith(message) and "Traceback" not in err
    assert out == ""
    code, out, _ = run(*args, "--json")
    refusal = json.loads(out)
    assert code == 2 and refusal["error"] == message.removeprefix("error: ").split("\n")[0]
