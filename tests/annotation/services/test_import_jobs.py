"""Import jobs: the task imports a saved upload through the synchronous import's own service, keeps its
result or its refusal (nothing written), and reports lines read."""

import shutil

import pytest

from annotation.models import Answer, ImportJob, Run
from annotation.selectors.import_jobs import import_job_get, import_job_status
from annotation.services.import_jobs import import_job_folder, import_job_start
from annotation.tasks import run_import_job
from evalapp.errors import ServiceError
from tests.annotation.services.conftest import ANSWERS, run_record
from tests.conftest import write_jsonl


def queued_job(user, rows, *, kind="run", options=None):
    folder, relative = import_job_folder()
    write_jsonl(folder / "upload.jsonl", rows)
    return import_job_start(
        kind=kind,
        user=user,
        upload=f"{relative}/upload.jsonl",
        upload_name="mine.jsonl",
        upload_bytes=(folder / "upload.jsonl").stat().st_size,
        total_lines=len(rows),
        options=options or {"strict": False},
    ), folder


@pytest.mark.django_db
def test_the_task_imports_the_upload_and_keeps_the_result(loaded, make_user):
    user = make_user("eng", "engineer")
    job, folder = queued_job(user, [run_record(), *ANSWERS])
    assert import_job_status(job)["status"] == "queued" and Run.objects.count() == 0
    run_import_job(job.pk)
    job.refresh_from_db()
    status = import_job_status(job)
    assert (status["status"], status["http_status"], status["lines_read"], status["total_lines"]) == ("done", 201, 4, 4)
    assert status["result"]["run_id"] == "r1" and status["result"]["answers"] == 3
    assert Answer.objects.filter(run__run_id="r1").count() == 3
    assert not folder.exists()  # the upload is gone once imported
    # Delivered twice: the second delivery finds the job done and does nothing.
    run_import_job(job.pk)
    assert Run.objects.count() == 1 and ImportJob.objects.get().status == "done"


@pytest.mark.django_db
def test_a_refused_upload_fails_the_job_with_its_problems_and_writes_nothing(loaded, make_user):
    user = make_user("eng", "engineer")
    job, _ = queued_job(user, [run_record(), ANSWERS[0], {"qid": "q-0002", "answer": 3}])
    run_import_job(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and job.http_status == 400
    assert job.error["error"] == "mine.jsonl: 1 problem(s); nothing was imported"
    assert job.error["problems"] == [{"line": 3, "field": "answer", "message": "must be a string"}]
    assert (Run.objects.count(), Answer.objects.count()) == (0, 0)


@pytest.mark.django_db
def test_a_question_job_answers_as_the_synchronous_import(tmp_path, make_user):
    user = make_user("cur", "expert")
    rows = [{"qid": "q-1", "question": "x", "stratum": "s"}]
    job, _ = queued_job(user, rows, kind="questions", options={"dataset": "support"})
    run_import_job(job.pk)
    job.refresh_from_db()
    assert (job.status, job.http_status, job.result["examples"], job.result["created"]) == ("done", 201, 1, True)


@pytest.mark.django_db
def test_only_the_starter_and_staff_see_a_job(loaded, make_user):
    owner, other = make_user("eng", "engineer"), make_user("eng2", "engineer")
    job, folder = queued_job(owner, [run_record(), *ANSWERS])
    assert import_job_get(job.pk, user=owner) == job
    with pytest.raises(ServiceError) as caught:
        import_job_get(job.pk, user=other)
    assert caught.value.status == 404 and caught.value.message == f"unknown import job {job.pk}"
    other.is_staff = True
    assert import_job_get(job.pk, user=other) == job
    shutil.rmtree(folder)


@pytest.mark.django_db
def test_a_running_job_reports_the_lines_its_worker_has_read(loaded, make_user):
    from annotation.selectors.import_jobs import progress_path

    job, _ = queued_job(make_user("eng", "engineer"), [run_record(), *ANSWERS])
    ImportJob.objects.filter(pk=job.pk).update(status="running")
    job.refresh_from_db()
    progress_path(job).write_text("3")
    assert (import_job_status(job)["lines_read"], import_job_status(job)["percent"]) == (3, 75)
