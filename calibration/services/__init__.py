"""Writes of the calibration app, one module per sub-domain.

judges (versions, config hash, URL allow list) · verdicts (imported from outside) · samples (the
stratified draw) · engine (the chunk executor calibration and grading runs share: rate limit, retries,
heartbeat, batched writes, fan-out, cancel, resume) · calibration (calibration runs and their
measurement) · grading (grading runs) · sweep (stalled runs, and waiting on a run).

Every service is keyword-only and raises ServiceError for input the caller must fix. Celery work is
scheduled only once the transaction commits, never from inside it.
"""
