"""Celery tasks of the annotation app: thin, take ids, re-fetch, return early when done or gone.

Services are imported inside the tasks: the services import this module to schedule its tasks, so a
module-level import here would be a cycle."""

from celery import shared_task


@shared_task(name="annotation.run_import_job", acks_late=True)
def run_import_job(job_id: int) -> None:
    """Import one queued upload (annotation.services.import_jobs). Not retried: an import that fails
    fails for its input, and its refusal is kept on the job. The global task time limits apply."""
    from annotation.services.import_jobs import import_job_execute

    import_job_execute(job_id=job_id)
