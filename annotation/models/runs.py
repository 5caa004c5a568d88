from django.conf import settings
from django.db import models

VERDICTS = [("correct", "correct"), ("incorrect", "incorrect")]


# What a system run pins about the system that produced it; runs compare fairly when these agree.
PINNED = ("model_snapshot", "prompt_hash", "evaluator_version", "evaluator_config_hash", "harness_commit", "index_id")

# What a run record must carry for its score to be reproducible and for it to be a repeat of another run.
REQUIRED_PINS = (*PINNED, "dataset_hash")


def missing_pins(record: dict) -> tuple[str, ...]:
    """The pinned fields (and the dataset hash) a run record leaves absent, null or empty, in REQUIRED_PINS order."""
    return tuple(key for key in REQUIRED_PINS if record.get(key) in (None, ""))


class Run(models.Model):
    """A system's answers to a labelled set, with the pinned inputs that make its score reproducible."""

    run_id = models.CharField(max_length=200, unique=True)
    system = models.CharField(max_length=200, db_index=True)
    dataset = models.ForeignKey(
        "annotation.Dataset", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    dataset_version = models.ForeignKey(
        "annotation.DatasetVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="runs"
    )
    dataset_hash = models.CharField(max_length=71, blank=True)
    model_snapshot = models.CharField(max_length=300, blank=True)
    prompt_hash = models.CharField(max_length=300, blank=True)
    evaluator_version = models.CharField(max_length=300, blank=True)
    evaluator_config_hash = models.CharField(max_length=300, blank=True)
    harness_commit = models.CharField(max_length=300, blank=True)
    index_id = models.CharField(max_length=300, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # The run record exactly as given, unknown keys included.
    record = models.JSONField(default=dict)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-started_at", "run_id"]

    def __str__(self):
        return self.run_id


class Answer(models.Model):
    """One system answer to one question of a run: the item that humans and judges grade."""

    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="answers")
    qid = models.CharField(max_length=200)
    answer = models.TextField(blank=True)
    # The harness's own score where it gave one.
    correct = models.BooleanField(null=True)
    retrieved = models.JSONField(default=list, blank=True)
    prompt_chunks = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    # Denormalised final human label, kept by the label services so calibration can query it.
    final_verdict = models.CharField(max_length=20, choices=VERDICTS, blank=True, db_index=True)
    final_source = models.CharField(max_length=20, blank=True)  # "agreement" or "adjudication"
    final_changed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "qid"]
        constraints = [models.UniqueConstraint(fields=["run", "qid"], name="uniq_answer_qid")]
        # Grading a million answers reads the qids by harness score from this index alone.
        indexes = [models.Index(fields=["run", "correct", "qid"], name="answer_run_correct_qid")]

    def __str__(self):
        return f"{self.run.run_id}:{self.qid}"


class HumanLabel(models.Model):
    """An annotator's current verdict on an answer: at most one per annotator; history in LabelEvent."""

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="labels")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="labels")
    verdict = models.CharField(max_length=20, choices=VERDICTS)
    rationale = models.TextField(blank=True)
    source = models.CharField(max_length=20, default="import")  # "import", "app", "queue"
    labelled_at = models.DateTimeField()
    active_seconds = models.FloatField(null=True, blank=True)
    round = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["answer_id", "labelled_at"]
        constraints = [models.UniqueConstraint(fields=["answer", "annotator"], name="uniq_label_annotator")]

    def __str__(self):
        return f"{self.answer} {self.annotator} {self.verdict}"


class LabelEvent(models.Model):
    """Append-only history of every label written or changed, so no verdict is ever lost."""

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="label_events")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    old_verdict = models.CharField(max_length=20, blank=True)
    new_verdict = models.CharField(max_length=20)
    rationale = models.TextField(blank=True)
    source = models.CharField(max_length=20)
    round = models.PositiveIntegerField(default=1)
    # Why a label was replaced by someone other than its annotator (an import with --replace), and who did it.
    reason = models.TextField(blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]


class Adjudication(models.Model):
    """An adjudicator's final decision on an answer whose labels disagree. The latest one counts."""

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="adjudications")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    verdict = models.CharField(max_length=20, choices=VERDICTS)
    reason = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answer_id", "at", "id"]


class CriterionLabel(models.Model):
    """An annotator's current value on an answer for one of its dataset's criteria (a `Criterion` other than
    the binary verdict, which stays a HumanLabel): at most one per annotator and criterion name, under the
    criterion version it was given on; history in CriterionLabelEvent."""

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="criterion_labels")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    criterion = models.ForeignKey("annotation.Criterion", on_delete=models.PROTECT, related_name="labels")
    name = models.CharField(max_length=100)  # the criterion's name, whatever its version
    value = models.CharField(max_length=100)
    rationale = models.TextField(blank=True)
    source = models.CharField(max_length=20, default="import")
    labelled_at = models.DateTimeField()

    class Meta:
        ordering = ["answer_id", "name", "labelled_at"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "annotator", "name"], name="uniq_criterion_label_annotator")
        ]


class CriterionLabelEvent(models.Model):
    """Append-only history of every criterion value written or changed, so none is ever lost."""

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    criterion = models.ForeignKey("annotation.Criterion", on_delete=models.PROTECT, related_name="+")
    name = models.CharField(max_length=100)
    old_value = models.CharField(max_length=100, blank=True)
    new_value = models.CharField(max_length=100)
    rationale = models.TextField(blank=True)
    source = models.CharField(max_length=20)
    reason = models.TextField(blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]


class CriterionAdjudication(models.Model):
    """An adjudicator's final value on one criterion of an answer whose values disagree. Append-only: the
    latest one per (answer, name) counts."""

    answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="criterion_adjudications")
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    criterion = models.ForeignKey("annotation.Criterion", on_delete=models.PROTECT, related_name="+")
    name = models.CharField(max_length=100)
    value = models.CharField(max_length=100)
    reason = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["answer_id", "name", "at", "id"]
        indexes = [models.Index(fields=["answer", "name", "at"], name="criterion_adjudication_latest")]
