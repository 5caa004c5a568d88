"""Input and output serializers of the annotation API (one per direction, no workflow in them)."""

from rest_framework import serializers

from annotation.models import (
    Answer,
    Dataset,
    DatasetVersion,
    Document,
    EditAudit,
    HumanLabel,
    Run,
)
from evalapp.api import finite_number, whole_number
from evalapp.fields import names, shares, text
from evalapp.validation import ACTIVE_SECONDS_MAX


class HitSerializer(serializers.Serializer):
    chunk_id = serializers.CharField()
    doc_id = serializers.CharField()
    title = serializers.CharField()
    source = serializers.CharField()
    rank = serializers.FloatField()
    snippet_html = serializers.CharField()
    partial = serializers.BooleanField(
        help_text="true when more chunks matched than could be ranked (the X-Search-* headers say how many): "
        "these are the best of the first ones only; add a word or a filter to rank every match"
    )


class ChunkSerializer(serializers.Serializer):
    chunk_id = serializers.CharField()
    doc_id = serializers.CharField(source="document.doc_id")
    title = serializers.CharField(source="document.title")
    ordinal = serializers.IntegerField()
    text = serializers.CharField()
    retired = serializers.BooleanField()


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = ["doc_id", "title", "source", "text_sha256", "prechunked", "created_at", "updated_at"]


class VersionSerializer(serializers.ModelSerializer):
    dataset = serializers.CharField(source="dataset.name")
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)

    class Meta:
        model = DatasetVersion
        fields = [
            "dataset",
            "number",
            "dataset_hash",
            "source",
            "note",
            "examples",
            "added",
            "removed",
            "modified",
            "unchanged",
            "created_by",
            "created_at",
        ]


class DatasetSerializer(serializers.ModelSerializer):
    latest = serializers.SerializerMethodField()

    class Meta:
        model = Dataset
        fields = ["name", "description", "no_answer_stratum", "strata_budget", "created_at", "latest"]

    def get_latest(self, obj) -> dict | None:
        version = obj.versions.order_by("-number").first()
        return VersionSerializer(version).data if version else None


class BridgedResultSerializer(serializers.Serializer):
    """What an import of another tool's file adds (annotation.bridges): its format and what it left out."""

    format = serializers.CharField(required=False, help_text="the file's format: jsonl, or another tool's")
    not_mapped = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="the foreign file's fields no record carries (array indices as [])",
    )


class ImportFormatSerializer(serializers.Serializer):
    """The format of an uploaded file: form field beside the file, or query parameter."""

    format = serializers.CharField(
        required=False,
        default="jsonl",
        max_length=40,
        help_text="jsonl (the project's own, the default) or another tool's export (see the README's Bridges)",
    )


class QuestionImportOptionsSerializer(ImportFormatSerializer):
    stratum_default = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=100,
        help_text="a foreign question's stratum when it gives none",
    )


class VersionResultSerializer(BridgedResultSerializer):
    dataset = serializers.CharField()
    dataset_hash = serializers.CharField()
    version = serializers.IntegerField()
    examples = serializers.IntegerField()
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    modified = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    created = serializers.BooleanField()


class StrataInSerializer(serializers.Serializer):
    strata = serializers.DictField(
        child=serializers.CharField(max_length=50), help_text="{stratum: percentage}, summing to 100"
    )


class PublishInSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class WorkingItemSerializer(serializers.Serializer):
    qid = serializers.CharField()
    record = serializers.DictField()
    revision = serializers.IntegerField()
    edited = serializers.BooleanField()


class WorkingEditInSerializer(serializers.Serializer):
    changes = serializers.DictField(help_text="fields of the question record to set")
    base_revision = whole_number(
        0, 2**31 - 1, required=False, allow_null=True, help_text="the revision you edited; a mismatch answers 409"
    )
    active_seconds = finite_number(
        0,
        ACTIVE_SECONDS_MAX,
        required=False,
        default=0,
        help_text="seconds of active work on this edit (at most a day)",
    )
    client_key = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=100,
        help_text="idempotency key: a retried save with the same key lands once",
    )
    delete = serializers.BooleanField(required=False, default=False)


class AuditSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username", default=None, allow_null=True)

    class Meta:
        model = EditAudit
        fields = ["qid", "field", "old_value", "new_value", "revision", "user", "at", "active_seconds"]


class RunSerializer(serializers.ModelSerializer):
    dataset = serializers.CharField(source="dataset.name", default=None, allow_null=True)
    answers = serializers.SerializerMethodField(help_text="how many answers the run holds")
    blind = serializers.SerializerMethodField(
        help_text="true while you label answers of this run blind: its record (which may carry scores) is withheld"
    )

    class Meta:
        model = Run
        fields = [
            "run_id",
            "system",
            "dataset",
            "dataset_hash",
            "model_snapshot",
            "prompt_hash",
            "evaluator_version",
            "evaluator_config_hash",
            "harness_commit",
            "index_id",
            "started_at",
            "imported_at",
            "record",
            "answers",
            "blind",
        ]

    def get_answers(self, obj) -> int:
        # A list annotates the count (one grouped query for every run); a single run counts its own.
        counted = getattr(obj, "answer_count", None)
        return counted if counted is not None else obj.answers.count()

    def get_blind(self, obj) -> bool:
        return obj.pk in self.context.get("blind_run_ids", ())

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if data["blind"]:
            data["record"] = None
        return data


class LabelSerializer(serializers.ModelSerializer):
    annotator = serializers.CharField(source="annotator.username")

    class Meta:
        model = HumanLabel
        fields = ["annotator", "verdict", "rationale", "source", "labelled_at", "round"]


class AnswerSerializer(serializers.ModelSerializer):
    labels = LabelSerializer(many=True, read_only=True)

    class Meta:
        model = Answer
        fields = [
            "qid",
            "answer",
            "correct",
            "retrieved",
            "prompt_chunks",
            "extra",
            "final_verdict",
            "final_source",
            "labels",
        ]


class LabelImportOptionsSerializer(ImportFormatSerializer):
    """How an import treats labels it would change: form fields beside the file, or query parameters."""

    run = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=200, help_text="the run a foreign file's labels go on"
    )
    annotators = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=5000,
        help_text="ID=USERNAME,…: the username of another tool's user (its id or e-mail)",
    )
    replace = serializers.BooleanField(
        required=False, default=False, help_text="replace labels whose verdict or rationale the file changes"
    )
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="why the labels are replaced (required with replace; kept in the history)",
    )


class LabelImportUploadSerializer(LabelImportOptionsSerializer):
    file = serializers.FileField(help_text="JSON Lines, UTF-8, one label a line")


class LabelImportResultSerializer(BridgedResultSerializer):
    labels = serializers.IntegerField()
    created = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    replaced = serializers.IntegerField()
    users_created = serializers.ListField(child=serializers.CharField(), help_text="always empty over the API")


# ---------------------------------------------------------------------------------------------
# outputs built from selector and service dicts: each field names a key the payload carries


class ChunkWithNeighboursSerializer(serializers.Serializer):
    chunk = ChunkSerializer()
    neighbours = ChunkSerializer(many=True)


class CorpusImportResultSerializer(serializers.Serializer):
    documents = serializers.IntegerField(help_text="documents in the file")
    chunks = serializers.IntegerField(help_text="chunks added")
    retired = serializers.IntegerField()


class StrataResultSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    strata = shares(help_text="{stratum: percentage}")


class StaleGoldSerializer(serializers.Serializer):
    qid = serializers.CharField()
    gold_chunk_id = text()
    reason = serializers.CharField()


class MovedGoldSerializer(serializers.Serializer):
    qid = serializers.CharField()
    gold_chunk_id = text()
    now_in = serializers.CharField(help_text="the live chunk that holds the gold_text now")


class ExtraNotLiveSerializer(serializers.Serializer):
    qid = serializers.CharField()
    chunk_ids = names()


class CheckLabelsSerializer(serializers.Serializer):
    """The `check_labels` object."""

    dataset_hash = serializers.CharField()
    checked = serializers.IntegerField()
    stale = StaleGoldSerializer(many=True)
    stale_share = serializers.FloatField()
    moved = MovedGoldSerializer(many=True)
    extra_not_live = ExtraNotLiveSerializer(many=True)
    corpus_state = serializers.CharField()


class StalePointSerializer(serializers.Serializer):
    corpus_state = serializers.CharField()
    began = serializers.CharField(help_text="when the corpus entered this state (ISO 8601)")
    checked = serializers.IntegerField()
    stale = serializers.IntegerField()
    stale_share = serializers.FloatField()


class StaleHistorySerializer(serializers.Serializer):
    """The `check_labels --history` object: the last point is the live corpus."""

    dataset = serializers.CharField()
    version = serializers.IntegerField()
    dataset_hash = serializers.CharField()
    checked = serializers.IntegerField()
    history = StalePointSerializer(many=True)


class WorkingEditResultSerializer(WorkingItemSerializer):
    replayed = serializers.BooleanField(help_text="true when this client_key had already landed")


class RunImportOptionsSerializer(ImportFormatSerializer):
    """How a run import treats a record missing pinned fields: form field beside the file, or query parameter."""

    run_id = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=200, help_text="a foreign file's run record run_id"
    )
    system = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=200, help_text="a foreign file's run record system"
    )
    dataset = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=200, help_text="a foreign file's run record dataset"
    )
    strict = serializers.BooleanField(
        required=False,
        default=False,
        help_text="refuse (400) a run record missing pinned fields or its dataset hash instead of warning",
    )


class RunImportUploadSerializer(RunImportOptionsSerializer):
    file = serializers.FileField(help_text="JSON Lines, UTF-8, the run record on the first line")


class RunImportResultSerializer(BridgedResultSerializer):
    run_id = serializers.CharField()
    answers = serializers.IntegerField()
    dataset = text()
    dataset_hash = text()
    missing_pins = serializers.ListField(
        child=serializers.CharField(), help_text="pinned fields (or dataset_hash) the run record left empty"
    )
    warnings = serializers.ListField(
        child=serializers.CharField(), help_text="one sentence per missing pinned field; empty when fully pinned"
    )


class LabelExportLineSerializer(serializers.Serializer):
    """One line of the labels export (the import_labels format)."""

    run_id = serializers.CharField()
    qid = serializers.CharField()
    annotator = serializers.CharField()
    verdict = serializers.CharField()
    labelled_at = serializers.CharField()
    rationale = serializers.CharField(allow_blank=True)
    source = serializers.CharField(allow_blank=True)
