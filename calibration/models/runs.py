from django.conf import settings
from django.db import models

RUN_STATUSES = [
    ("queued", "queued"),
    ("running", "running"),
    ("done", "done"),
    ("failed", "failed"),
    ("cancelled", "cancelled"),
]
JUDGE_VERDICTS = [("correct", "correct"), ("incorrect", "incorrect"), ("invalid", "invalid"), ("error", "error")]


class CalibrationSample(models.Model):
    """A seeded stratified draw of human-labelled answers for one judge on one dataset.

    Stored so it can be re-drawn identically, and reused by the judge's next versions so that
    versions are compared on the same items.
    """

    judge = models.ForeignKey("calibration.Judge", on_delete=models.PROTECT, related_name="samples")
    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.PROTECT, related_name="+")
    dataset_hash = models.CharField(max_length=71, blank=True)  # latest version when drawn
    size = models.PositiveIntegerField()
    seed = models.IntegerField(default=0)
    allocation = models.JSONField(default=dict)  # {stratum: n drawn}
    available = models.JSONField(default=dict)  # {stratum: n labelled answers that existed}
    budget = models.JSONField(default=dict)  # the strata budget used ({} = proportional)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class SampleItem(models.Model):
    """One answer in a sample, with the stratum of its question in its run's dataset version."""

    sample = models.ForeignKey(CalibrationSample, on_delete=models.PROTECT, related_name="items")
    answer = models.ForeignKey("annotation.Answer", on_delete=models.PROTECT, related_name="+")
    stratum = models.CharField(max_length=100)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["sample_id", "position"]
        constraints = [models.UniqueConstraint(fields=["sample", "answer"], name="uniq_sample_answer")]


class CalibrationRun(models.Model):
    """A judge version run over a sample in Celery workers; closed by a measurement."""

    judge_version = models.ForeignKey("calibration.JudgeVersion", on_delete=models.PROTECT, related_name="runs")
    sample = models.ForeignKey(CalibrationSample, on_delete=models.PROTECT, related_name="runs")
    status = models.CharField(max_length=20, choices=RUN_STATUSES, default="queued", db_index=True)
    total = models.PositiveIntegerField(default=0)
    chunk_size = models.PositiveIntegerField(default=20)
    message = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    dispatches = models.PositiveIntegerField(default=0)  # 1 + how many times it was resumed
    # How many times each item is judged: the first judgement is its Verdict, the others RepeatVerdicts.
    repeats = models.PositiveSmallIntegerField(default=1)

    class Meta:
        ordering = ["-created_at", "-id"]


class Verdict(models.Model):
    """The judge's verdict on one sample item in one run: exactly one per (run, item)."""

    run = models.ForeignKey(CalibrationRun, on_delete=models.PROTECT, related_name="verdicts")
    item = models.ForeignKey(SampleItem, on_delete=models.PROTECT, related_name="verdicts")
    verdict = models.CharField(max_length=20, choices=JUDGE_VERDICTS)
    raw_output = models.TextField(blank=True)
    reason = models.TextField(blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=1)
    human_verdict = models.CharField(max_length=20, blank=True)  # the final human label when measured
    values = models.JSONField(default=dict, blank=True)  # {criterion: value | "invalid"} the version scores
    response_format = models.CharField(max_length=20, blank=True)  # json_schema | json_object | plain | ""
    # What the server said it ran (the response's `model`, `system_fingerprint`); blank when it said nothing.
    served_model = models.CharField(max_length=200, blank=True)
    system_fingerprint = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "item_id"]
        constraints = [models.UniqueConstraint(fields=["run", "item"], name="uniq_run_item_verdict")]


class RepeatVerdict(models.Model):
    """The judge's 2nd..Rth verdict on one sample item of a run with repeats: one per (run, item, repeat).
    Kept apart from Verdict so that agreement with the humans reads the first judgement only."""

    run = models.ForeignKey(CalibrationRun, on_delete=models.PROTECT, related_name="repeat_verdicts")
    item = models.ForeignKey(SampleItem, on_delete=models.PROTECT, related_name="repeat_verdicts")
    repeat = models.PositiveSmallIntegerField()  # 2..run.repeats
    verdict = models.CharField(max_length=20, choices=JUDGE_VERDICTS)
    raw_output = models.TextField(blank=True)
    reason = models.TextField(blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=1)
    values = models.JSONField(default=dict, blank=True)
    served_model = models.CharField(max_length=200, blank=True)
    system_fingerprint = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "item_id", "repeat"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item", "repeat"], name="uniq_run_item_repeat"),
        ]


class Measurement(models.Model):
    """Agreement of a judge version with the final human labels over one run's sample."""

    judge_version = models.ForeignKey("calibration.JudgeVersion", on_delete=models.PROTECT, related_name="measurements")
    run = models.OneToOneField(CalibrationRun, on_delete=models.PROTECT, related_name="measurement")
    n = models.PositiveIntegerField()
    labels = models.JSONField(default=list)
    confusion = models.JSONField(default=list)  # k x k counts, rows human, columns judge
    strata = models.JSONField(default=dict)  # {stratum: k x k counts}
    bootstrap_ci95 = models.JSONField(null=True, blank=True)
    invalid = models.PositiveIntegerField(default=0)
    excluded = models.PositiveIntegerField(default=0)  # items whose final human label was withdrawn
    dataset_hash = models.CharField(max_length=71, blank=True)
    # {criterion: figures of the judge's values against the final human values} for the version's criteria.
    criteria = models.JSONField(default=dict, blank=True)
    # {repeats, n, flip_rate, flip_rate_ci95, kappa_self, kappa_self_ci95} of a run with repeats, else null.
    self_consistency = models.JSONField(null=True, blank=True)
    # The gate's length bias worked out when the measurement was taken (calibration.selectors.reliability:
    # statistic, ci95, method, n, n_short, n_long, reason; the warning is worded on reading, from the setting
    # then). Null for a measurement taken before it was kept here: worked out on its first reading instead.
    length_bias = models.JSONField(null=True, blank=True)
    measured_at = models.DateTimeField()

    class Meta:
        ordering = ["-measured_at", "-id"]
        get_latest_by = "measured_at"


class GradingRun(models.Model):
    """A judge version grading a system run's answers. Refused unless the gate passes or it is forced;
    a forced grading keeps who forced it, why, and the gate it overrode."""

    judge_version = models.ForeignKey("calibration.JudgeVersion", on_delete=models.PROTECT, related_name="gradings")
    run = models.ForeignKey("annotation.Run", on_delete=models.PROTECT, related_name="gradings")
    status = models.CharField(max_length=20, choices=RUN_STATUSES, default="queued", db_index=True)
    gate_status = models.CharField(max_length=20)
    gate = models.JSONField(default=dict)
    forced = models.BooleanField(default=False)
    forced_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    force_reason = models.TextField(blank=True)
    total = models.PositiveIntegerField(default=0)
    # Graded by the same engine as calibration runs: chunk tasks of `chunk_size` answers, a heartbeat the
    # stall sweep watches, cancel and resume; `message` says why a grading failed or stands still.
    chunk_size = models.PositiveIntegerField(default=50)
    message = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    dispatches = models.PositiveIntegerField(default=1)  # 1 + how many times it was resumed
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]


class GradedAnswer(models.Model):
    """A judge verdict on one answer in a grading run."""

    grading = models.ForeignKey(GradingRun, on_delete=models.PROTECT, related_name="answers")
    answer = models.ForeignKey("annotation.Answer", on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=20, choices=JUDGE_VERDICTS)
    values = models.JSONField(default=dict, blank=True)  # {criterion: value | "invalid"}
    raw_output = models.TextField(blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    served_model = models.CharField(max_length=200, blank=True)
    system_fingerprint = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["grading", "answer"], name="uniq_graded_answer")]
