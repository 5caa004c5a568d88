"""Imports too large for the HTTP request: the upload kept under the var dir, a job row, a Celery task
that calls the very service the synchronous import calls, and the job's status for the caller to poll."""

import logging
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import ImportJob
from annotation.models.imports import IMPORT_KINDS
from annotation.selectors.import_jobs import progress_path
from annotation.tasks import run_import_job
from evalapp.errors import ServiceError
from evalapp.jsonl import read_progress

log = logging.getLogger(__name__)

JOBS_DIR = "imports"


def _corpus(path: Path, options: dict[str, Any], user: Any) -> tuple[dict[str, Any], int]:
    from annotation.services.corpus import corpus_import

    return corpus_import(path=path).as_dict(), 201


def _bridge_options(options: dict[str, Any]):
    from annotation.bridges import BridgeOptions

    record = {k: options[k] for k in ("run_id", "system", "dataset") if options.get(k)}
    return BridgeOptions(
        run_id=options.get("run") or options.get("run_id") or None,
        dataset=options.get("dataset") or None,
        stratum_default=options.get("stratum_default") or None,
        run_record=record,
    )


def _questions(path: Path, options: dict[str, Any], user: Any) -> tuple[dict[str, Any], int]:
    from annotation.bridges import bridged_import
    from annotation.services.datasets import questions_import

    def write(p: Path) -> dict[str, Any]:
        return questions_import(path=p, dataset_name=options["dataset"], user=user).as_dict()

    body = bridged_import(
        kind="questions", fmt=options.get("format"), path=path, options=_bridge_options(options), write=write
    )
    return body, 201 if body["created"] else 200


def _run(path: Path, options: dict[str, Any], user: Any) -> tuple[dict[str, Any], int]:
    from annotation.bridges import bridged_import
    from annotation.services.runs import run_import

    def write(p: Path) -> dict[str, Any]:
        return run_import(path=p, strict=bool(options.get("strict"))).as_dict()

    # The dataset option of a run import is the run record's, not a questions import's.
    bridge = _bridge_options({**options, "stratum_default": None})
    return bridged_import(kind="run", fmt=options.get("format"), path=path, options=bridge, write=write), 201


def _labels(path: Path, options: dict[str, Any], user: Any) -> tuple[dict[str, Any], int]:
    from annotation.bridges import bridged_import
    from annotation.services.label_import import labels_import

    def write(p: Path) -> dict[str, Any]:
        return labels_import(
            path=p,
            replace=bool(options.get("replace")),
            reason=options.get("reason", ""),
            by=user,
            create_users=False,
        ).as_dict()

    from annotation.bridges.foreign import option_pairs

    given = [pair for pair in (options.get("annotators") or "").split(",") if pair.strip()]
    bridge = replace(_bridge_options({"run": options.get("run")}), annotators=option_pairs(given, option="annotators"))
    return bridged_import(kind="labels", fmt=options.get("format"), path=path, options=bridge, write=write), 201


def _traffic(path: Path, options: dict[str, Any], user: Any) -> tuple[dict[str, Any], int]:
    from annotation.services.traffic import traffic_import

    return traffic_import(path=path, dataset_name=options["dataset"], source=options.get("source", "")).as_dict(), 201


Importer = Callable[[Path, dict[str, Any], Any], tuple[dict[str, Any], int]]

# What each kind of job calls: the service of the synchronous import, with the same arguments. An app above
# this one adds its own kinds with register_importer (its AppConfig.ready), so the job runs its service
# without annotation importing it.
IMPORTERS: dict[str, Importer] = {
    "corpus": _corpus,
    "questions": _questions,
    "run": _run,
    "labels": _labels,
    "traffic": _traffic,
}


def register_importer(kind: str, importer: Importer) -> None:
    """Let a job of `kind` run `importer` (path, options, user) -> (result body, HTTP status)."""
    if kind not in {k for k, _ in IMPORT_KINDS}:
        raise ValueError(f"{kind!r} is not one of ImportJob's kinds")
    IMPORTERS[kind] = importer


def import_job_folder() -> tuple[Path, str]:
    """A new folder for one job's upload under the var dir: (absolute path, path relative to the var dir)."""
    relative = os.path.join(JOBS_DIR, uuid.uuid4().hex)
    folder = Path(settings.VAR_DIR) / relative
    folder.mkdir(parents=True, exist_ok=False)
    return folder, relative


@transaction.atomic
def import_job_start(
    *,
    kind: str,
    user: Any,
    upload: str,
    upload_name: str,
    upload_bytes: int,
    total_lines: int,
    options: dict[str, Any],
) -> ImportJob:
    """Queue the import of an upload already saved under the var dir (`upload`, relative to it); the task
    is sent once the job row is committed."""
    if kind not in IMPORTERS:
        raise ServiceError(f"unknown import kind {kind!r}")
    job = ImportJob.objects.create(
        kind=kind,
        user=user,
        upload=upload,
        upload_name=upload_name,
        upload_bytes=upload_bytes,
        total_lines=total_lines,
        options=options,
    )
    run_import_job.delay_on_commit(job.pk)
    return job


def _report_progress(path: Path) -> Callable[[int], None]:
    def report(lines: int) -> None:
        part = path.with_suffix(".part")
        try:
            part.write_text(str(lines))
            os.replace(part, path)
        except OSError:  # progress is a courtesy; the import goes on
            pass

    return report


def import_job_execute(*, job_id: int) -> None:
    """Run a queued job: call its kind's import service on the saved upload and keep what it answered (the
    result body, or the refusal with its line and field problems: the service wrote nothing then).

    Not atomic itself: the service is, and the job's status must be committed apart from it. A job already
    done or failed is left as it is (a task delivered twice); one found running had lost its worker, whose
    import was rolled back with its connection, so it is run again."""
    job = ImportJob.objects.select_related("user").filter(pk=job_id).first()
    if job is None or job.status in ("done", "failed"):
        return
    ImportJob.objects.filter(pk=job.pk).update(status="running", started_at=timezone.now())
    job.status = "running"
    path = Path(settings.VAR_DIR) / job.upload
    token = read_progress.set(_report_progress(progress_path(job)))
    outcome: dict[str, Any]
    try:
        body, code = IMPORTERS[job.kind](path, job.options, job.user)
        outcome = {"status": "done", "result": body, "http_status": code}
    except ServiceError as exc:
        message = exc.message.replace(str(path), job.upload_name or "upload")
        outcome = {"status": "failed", "error": {**exc.as_dict(), "error": message}, "http_status": exc.status}
    except SoftTimeLimitExceeded:
        seconds = settings.CELERY_TASK_SOFT_TIME_LIMIT
        error = f"the import took longer than {seconds} s (CELERY_TASK_SOFT_TIME_LIMIT); nothing was imported"
        outcome = {"status": "failed", "error": {"error": error, "problems": []}, "http_status": 503}
    except Exception:
        log.exception("import job %s failed", job.pk)
        error = "the import failed on the server; nothing was imported (the worker's log has the cause)"
        outcome = {"status": "failed", "error": {"error": error, "problems": []}, "http_status": 500}
    finally:
        read_progress.reset(token)
    ImportJob.objects.filter(pk=job.pk).update(**outcome, lines_read=job.total_lines, finished_at=timezone.now())
    shutil.rmtree(path.parent, ignore_errors=True)
