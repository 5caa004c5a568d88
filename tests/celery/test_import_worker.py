"""A queued API import carried out by a real Celery worker: the job goes from queued to done with the
synchronous import's result, and a refused upload fails naming its line with nothing written."""

import json
import time

import pytest

pytestmark = pytest.mark.celery_worker

QUEUE = """
import json, sys
from django.contrib.auth import get_user_model
from annotation.services.import_jobs import import_job_folder, import_job_start
lines = open(sys.argv[1], "rb").read()
folder, relative = import_job_folder()
(folder / "upload.jsonl").write_bytes(lines)
job = import_job_start(kind="run", user=get_user_model().objects.get(username="eng"),
    upload=relative + "/upload.jsonl", upload_name="run.jsonl", upload_bytes=len(lines),
    total_lines=lines.count(b"\\n"), options={"strict": False})
print(job.pk)
"""


def queue(stack, path) -> int:
    script = stack.tmp / "queue.py"
    script.write_text(QUEUE)
    done = stack.manage(
        "shell", "-c", f"import sys; sys.argv = ['x', {str(path)!r}]; exec(open({str(script)!r}).read())"
    )
    return int(done.stdout.strip().splitlines()[-1])


def wait_for(stack, job_id, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = stack.sql(
            "select status, result, error, lines_read, total_lines from annotation_importjob where id = ?", job_id
        )
        if rows and rows[0][0] in ("done", "failed"):
            return rows[0]
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} did not end in {timeout} s" + stack.logs())


def test_a_worker_imports_a_queued_run(stack):
    files = stack.load_world(n=30)
    stack.manage("add_user", "eng", "--role", "engineer")
    lines = files["run"].read_text().splitlines()
    header = json.loads(lines[0])
    run = stack.tmp / "run2.jsonl"
    run.write_text("\n".join([json.dumps({**header, "run_id": "run-b"}), *lines[1:]]) + "\n")
    job = queue(stack, run)
    stack.start_worker("w1")
    status, result, error, read, total = wait_for(stack, job)
    assert (status, error, read, total) == ("done", None, 31, 31), stack.logs()
    result = json.loads(result)
    assert (result["run_id"], result["answers"]) == ("run-b", 30)
    assert stack.sql(
        "select count(*) from annotation_answer a join annotation_run r on a.run_id = r.id where r.run_id = 'run-b'"
    ) == [(30,)]

    bad = stack.tmp / "bad.jsonl"
    bad.write_text(
        "\n".join([json.dumps({**header, "run_id": "run-c"}), lines[1], '{"qid": "q-0001", "answer": 3}']) + "\n"
    )
    status, result, error, *_ = wait_for(stack, queue(stack, bad))
    assert (status, result) == ("failed", None)
    assert json.loads(error)["problems"] == [{"line": 3, "field": "answer", "message": "must be a string"}]
    assert stack.sql("select count(*) from annotation_run where run_id = 'run-c'") == [(0,)]
