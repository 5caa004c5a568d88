"""Import jobs as their starter (or staff) sees them."""

import os
from pathlib import Path
from typing import Any

from django.conf import settings

from annotation.models import ImportJob
from annotation.policies import check_can_read_import_job
from evalapp.errors import ServiceError


def progress_path(job: ImportJob) -> Path:
    return Path(settings.VAR_DIR) / os.path.dirname(job.upload) / "progress"


def lines_read(job: ImportJob) -> int:
    """Lines of the upload read so far: the worker writes the count to a file beside the upload while the
    import's transaction is open (a row it updated would not be visible until the import commits)."""
    if job.status != "running":
        return job.lines_read
    try:
        return max(job.lines_read, int(progress_path(job).read_text() or 0))
    except (OSError, ValueError):
        return job.lines_read


def import_job_get(job_id: int, *, user: Any) -> ImportJob:
    """The job, or not found (404) when it does not exist or the user may not see it."""
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None:
        raise ServiceError(f"unknown import job {job_id}", status=404)
    check_can_read_import_job(user_id=user.pk, is_staff=user.is_staff, owner_id=job.user_id, job_id=job.pk)
    return job


def import_job_status(job: ImportJob) -> dict[str, Any]:
    """What a poll answers: status, progress (lines read of the upload's total), and the outcome once ended."""
    read = lines_read(job)
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "upload_name": job.upload_name,
        "upload_bytes": job.upload_bytes,
        "lines_read": read,
        "total_lines": job.total_lines,
        "percent": round(100 * read / job.total_lines) if job.total_lines else (100 if job.status == "done" else 0),
        "result": job.result if job.status == "done" else None,
        "error": job.error if job.status == "failed" else None,
        "http_status": job.http_status,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }
