from django.conf import settings
from django.db import models


class Dataset(models.Model):
    """A named labelled question set; its content lives in immutable versions."""

    name = models.SlugField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    no_answer_stratum = models.CharField(max_length=100, default="no_answer")
    # {stratum: percentage}; empty means no budget. Shares close to exactly 100.
    strata_budget = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Example(models.Model):
    """One question record, content-addressed: the primary key is the sha256 of its canonical JSON.

    Identical records across versions and datasets are stored once; a version is a manifest of
    (qid, example) pairs.
    """

    sha256 = models.CharField(max_length=64, primary_key=True)
    qid = models.CharField(max_length=200)
    stratum = models.CharField(max_length=100)
    # The canonical JSON the hash is taken over (sorted keys, compact, UTF-8): exported verbatim.
    canonical = models.TextField()

    def __str__(self):
        return f"{self.qid} {self.sha256[:12]}"


class DatasetVersion(models.Model):
    """An immutable snapshot of a dataset: never changed or deleted once written."""

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    dataset_hash = models.CharField(max_length=71)  # "sha256:" + 64 hex
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    source = models.CharField(max_length=20, choices=[("import", "import"), ("publish", "publish")])
    note = models.CharField(max_length=500, blank=True)
    examples = models.PositiveIntegerField()
    added = models.PositiveIntegerField()
    removed = models.PositiveIntegerField()
    modified = models.PositiveIntegerField()
    unchanged = models.PositiveIntegerField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset_id", "-number"]
        get_latest_by = "number"
        constraints = [
            models.UniqueConstraint(fields=["dataset", "number"], name="uniq_version_number"),
        ]
        indexes = [models.Index(fields=["dataset", "dataset_hash"], name="version_hash")]

    def __str__(self):
        return f"{self.dataset.name} v{self.number} {self.dataset_hash[:19]}"


class VersionEntry(models.Model):
    """One line of a version's manifest: qid -> example."""

    version = models.ForeignKey(DatasetVersion, on_delete=models.PROTECT, related_name="entries")
    qid = models.CharField(max_length=200)
    example = models.ForeignKey(Example, on_delete=models.PROTECT, related_name="+")
    # The example's stratum, copied here so per-stratum reads of a million-line manifest need no join.
    stratum = models.CharField(max_length=100, blank=True, default="")
    # The example's grading rule ("" when it names none), copied here so grading the answers a human label
    # scores reads no question record; NULL: not copied (a line written without it), read the record.
    grading = models.CharField(max_length=20, null=True, blank=True)  # noqa: DJ001 (NULL is "not kept", apart from "")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["version", "qid"], name="uniq_entry_qid")]
        # Per-stratum qid sets of a million-line manifest come from this index alone.
        indexes = [models.Index(fields=["version", "stratum", "qid"], name="entry_version_stratum_qid")]


class WorkingExample(models.Model):
    """An edit to one question on top of the dataset's latest version: the working copy is that version
    with these edits laid over it. An edit counts only while its base is still the latest version, so
    publishing (which makes a new latest version) folds the edits in without deleting anything.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="working")
    qid = models.CharField(max_length=200)
    base_version = models.ForeignKey(DatasetVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    # The edited record; null means the question is removed in the working copy.
    record = models.JSONField(null=True)
    # Bumped on every save: a client that saved against an older revision gets a conflict.
    revision = models.PositiveIntegerField(default=1)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    updated_at = models.DateTimeField(auto_now=True)
    active_seconds = models.FloatField(default=0)

    class Meta:
        ordering = ["dataset_id", "qid"]
        constraints = [models.UniqueConstraint(fields=["dataset", "qid"], name="uniq_working_qid")]

    def __str__(self):
        return f"{self.dataset.name}:{self.qid}"


class EditAudit(models.Model):
    """Who changed which field of a working question, when, from what to what. Append-only."""

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="audits")
    qid = models.CharField(max_length=200)
    field = models.CharField(max_length=100)
    old_value = models.JSONField(null=True)
    new_value = models.JSONField(null=True)
    revision = models.PositiveIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT)
    at = models.DateTimeField(auto_now_add=True)
    active_seconds = models.FloatField(default=0)
    # The idempotency key a client sent with the save, so a retried save lands once.
    client_key = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["dataset", "qid"], name="audit_qid")]


class GoldCheckReport(models.Model):
    """The stale-gold check of a version (annotation.selectors.stale_gold) against one state of the live
    corpus, kept so that every comparison on the version does not search the corpus again.

    Chunks are only ever added or retired, never edited or revived, so `corpus_state` (newest chunk id,
    number retired) names the live corpus exactly: any import that changes it makes a new state, and
    the next check recomputes."""

    version = models.ForeignKey(DatasetVersion, on_delete=models.CASCADE, related_name="+")
    corpus_state = models.CharField(max_length=100)
    # JSON text rather than a JSON column: PostgreSQL's jsonb would reorder the keys of the report it gives back.
    report = models.TextField(help_text="the report as JSON text, keys in the order the check wrote them")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["version", "corpus_state"], name="uniq_gold_check_state")]

    def __str__(self):
        return f"{self.version}: corpus {self.corpus_state}"


class Criterion(models.Model):
    """One version of a dataset's criterion: what a label on it may say (evalstats.criteria).

    Never edited: a changed definition is a new version with the next number, as judge versions are, so
    a label or a figure made under one definition keeps naming exactly that definition."""

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="criteria")
    name = models.CharField(max_length=100)
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=20)
    values = models.JSONField()
    pass_rule = models.CharField(max_length=300, blank=True)
    # What an annotator reads beside the control (what each value means); part of the definition, so a
    # changed guideline is a new version and every value names the guideline it was given under.
    guideline = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["dataset", "name", "number"]
        constraints = [models.UniqueConstraint(fields=["dataset", "name", "number"], name="uniq_criterion_version")]

    def __str__(self):
        return f"{self.dataset_id}:{self.name} v{self.number}"
