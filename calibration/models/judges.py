from django.conf import settings
from django.db import models

POLICIES = [("point", "point estimate"), ("lower_bound", "lower 95% bound")]
BACKENDS = [("span", "span"), ("extraction", "extraction"), ("openai", "openai"), ("replay", "replay")]


class Judge(models.Model):
    """A named judge; what it takes to pass its gate (threshold, policy, minimum n) is set per judge."""

    name = models.SlugField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    threshold = models.FloatField(default=0.7)
    policy = models.CharField(max_length=20, choices=POLICIES, default="point")
    min_n = models.PositiveIntegerField(default=30)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class JudgeVersion(models.Model):
    """One immutable configuration of a judge, identified by the hash of that configuration.

    Never updated after creation: any change to backend, model, prompt, parameters or rubric is a new
    version (and a new version starts unmeasured).
    """

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    backend = models.CharField(max_length=20, choices=BACKENDS)
    model = models.CharField(max_length=300, blank=True)
    prompt_template = models.TextField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    rubric = models.TextField(blank=True)
    # The dataset criteria it scores beside the verdict: [{"name", "threshold"}] (threshold None: reported,
    # not gated). The names are in the config hash (they change what the judge is asked); thresholds are
    # gate settings, as the judge's own threshold is.
    criteria = models.JSONField(default=list, blank=True)
    config_hash = models.CharField(max_length=71)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "config_hash"], name="uniq_judge_config"),
            models.UniqueConstraint(fields=["judge", "number"], name="uniq_judge_version_number"),
        ]

    def __str__(self):
        return f"{self.judge.name} v{self.number} ({self.config_hash[:15]})"


class ImportedVerdict(models.Model):
    """A verdict from a judge run outside the project (the `replay` backend reads these). Immutable."""

    judge_version = models.ForeignKey(JudgeVersion, on_delete=models.PROTECT, related_name="imported_verdicts")
    run_id = models.CharField(max_length=200)
    qid = models.CharField(max_length=200)
    # '' for the binary verdict; else the name of a criterion the version scores, its value in `value`.
    criterion = models.CharField(max_length=100, blank=True, default="")
    verdict = models.CharField(max_length=20, blank=True)
    value = models.CharField(max_length=100, blank=True, default="")
    record = models.JSONField(default=dict)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge_version", "run_id", "qid", "criterion"], name="uniq_imported_verdict_criterion"
            )
        ]
