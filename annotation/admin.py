"""Admin for every model; immutable records (versions, examples, audits, label history) are read-only."""

from django.contrib import admin

from annotation import models as m
from annotation.selectors.blind import blind_scope


class BlindScopeAdmin(admin.ModelAdmin):
    """Staff who are not superusers never see, on list or detail pages, rows of the runs they label blind
    (annotation.policies: blindness holds for the person, the admin included). `blind_run_field` is the
    path from the row to its run's pk; `blind_run_name_field` a path to the run's name instead."""

    blind_run_field = ""
    blind_run_name_field = ""

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if request.user.is_superuser or not (self.blind_run_field or self.blind_run_name_field):
            return qs
        scope = blind_scope(request.user)
        if not scope.run_ids:
            return qs
        if self.blind_run_name_field:
            return qs.exclude(**{f"{self.blind_run_name_field}__in": [name for name, _q in scope.where.values()]})
        return qs.exclude(**{f"{self.blind_run_field}__in": scope.run_ids})


class ReadOnlyAdmin(BlindScopeAdmin):
    """For records that are never changed or deleted once written."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class NoDeleteAdmin(BlindScopeAdmin):
    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(m.Document)
class DocumentAdmin(NoDeleteAdmin):
    list_display = ["doc_id", "title", "source", "updated_at"]
    search_fields = ["doc_id", "title"]
    list_filter = ["source"]
    readonly_fields = ["text_sha256", "prechunked"]


@admin.register(m.Chunk)
class ChunkAdmin(ReadOnlyAdmin):
    list_display = ["chunk_id", "ordinal", "retired", "created_at"]
    list_filter = ["retired"]
    search_fields = ["chunk_id"]


@admin.register(m.SearchTerm)
class SearchTermAdmin(ReadOnlyAdmin):
    """The search index's term dictionary (derived: rebuild_search_index makes it again from the chunks)."""

    list_display = ["term", "df", "max_weight"]
    search_fields = ["term"]


@admin.register(m.SearchStats)
class SearchStatsAdmin(ReadOnlyAdmin):
    list_display = ["id", "live_chunks"]


@admin.register(m.Dataset)
class DatasetAdmin(NoDeleteAdmin):
    list_display = ["name", "no_answer_stratum", "created_at"]


@admin.register(m.Criterion)
class CriterionAdmin(ReadOnlyAdmin):
    """Defined with `set_criterion` or the API, where a change becomes the next version; never edited here."""

    list_display = ["dataset", "name", "number", "kind", "pass_rule", "created_at"]
    list_filter = ["kind"]
    search_fields = ["name", "dataset__name"]


@admin.register(m.DatasetVersion)
class DatasetVersionAdmin(ReadOnlyAdmin):
    list_display = [
        "dataset",
        "number",
        "dataset_hash",
        "source",
        "examples",
        "added",
        "removed",
        "modified",
        "unchanged",
        "created_at",
    ]
    list_filter = ["dataset", "source"]


@admin.register(m.Example)
class ExampleAdmin(ReadOnlyAdmin):
    list_display = ["qid", "stratum", "sha256"]
    search_fields = ["qid", "sha256"]


@admin.register(m.VersionEntry)
class VersionEntryAdmin(ReadOnlyAdmin):
    list_display = ["version", "qid", "example"]
    search_fields = ["qid"]


@admin.register(m.GoldCheckReport)
class GoldCheckReportAdmin(ReadOnlyAdmin):
    list_display = ["version", "corpus_state", "created_at"]


@admin.register(m.WorkingExample)
class WorkingExampleAdmin(ReadOnlyAdmin):
    list_display = ["dataset", "qid", "revision", "updated_by", "updated_at"]


@admin.register(m.EditAudit)
class EditAuditAdmin(ReadOnlyAdmin):
    list_display = ["dataset", "qid", "field", "user", "at", "revision"]
    list_filter = ["dataset", "field"]


@admin.register(m.Run)
class RunAdmin(ReadOnlyAdmin):
    blind_run_field = "pk"
    list_display = ["run_id", "system", "dataset", "dataset_hash", "started_at"]


@admin.register(m.Answer)
class AnswerAdmin(ReadOnlyAdmin):
    blind_run_field = "run_id"
    list_display = ["run", "qid", "correct", "final_verdict", "final_source"]
    list_filter = ["run", "final_verdict"]


@admin.register(m.HumanLabel)
class HumanLabelAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["answer", "annotator", "verdict", "source", "labelled_at", "round"]


@admin.register(m.LabelEvent)
class LabelEventAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["answer", "annotator", "old_verdict", "new_verdict", "source", "at"]


@admin.register(m.CriterionLabel)
class CriterionLabelAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["answer", "annotator", "name", "value", "criterion", "source", "labelled_at"]


@admin.register(m.CriterionLabelEvent)
class CriterionLabelEventAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["answer", "annotator", "name", "old_value", "new_value", "source", "at"]


@admin.register(m.Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["answer", "adjudicator", "verdict", "at"]


@admin.register(m.CriterionAdjudication)
class CriterionAdjudicationAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["answer", "adjudicator", "name", "value", "criterion", "at"]


@admin.register(m.Queue)
class QueueAdmin(NoDeleteAdmin):
    list_display = ["name", "kind", "overlap", "size", "rubric_version", "created_by", "created_at"]
    readonly_fields = ["size", "rubric_version"]


@admin.register(m.QueueRubric)
class QueueRubricAdmin(ReadOnlyAdmin):
    list_display = ["queue", "number", "created_by", "created_at"]


@admin.register(m.QueueMember)
class QueueMemberAdmin(ReadOnlyAdmin):
    list_display = ["queue", "user", "added_at"]


@admin.register(m.QueueItem)
class QueueItemAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["queue", "answer", "position", "stratum", "status", "completed_at"]
    list_filter = ["queue", "status"]


@admin.register(m.Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    blind_run_field = "item__answer__run_id"
    list_display = ["queue", "item", "annotator", "state", "claimed_at", "lease_expires_at", "submitted_at"]
    list_filter = ["queue", "state"]


@admin.register(m.QueuePairCount)
class QueuePairCountAdmin(ReadOnlyAdmin):
    """Derived counts (queue_counts rebuilds them). A queue holding any answer of a run the staff member
    labels blind is hidden whole: its pair counts move with the other annotator's verdict."""

    blind_run_field = "queue__items__answer__run_id"
    list_display = ["queue", "stratum", "annotator_a", "annotator_b", "verdict_a", "verdict_b", "n"]
    list_filter = ["queue"]


@admin.register(m.QueueLabelSeconds)
class QueueLabelSecondsAdmin(ReadOnlyAdmin):
    blind_run_field = "queue__items__answer__run_id"
    list_display = ["queue", "annotator", "timed", "seconds", "n"]
    list_filter = ["queue"]


@admin.register(m.RelabelAudit)
class RelabelAuditAdmin(ReadOnlyAdmin):
    list_display = ["name", "source", "batch_size", "sample_size", "status", "created_at"]


@admin.register(m.RelabelAuditItem)
class RelabelAuditItemAdmin(ReadOnlyAdmin):
    blind_run_field = "answer__run_id"
    list_display = ["audit", "answer", "original_verdict"]


@admin.register(m.ImportJob)
class ImportJobAdmin(ReadOnlyAdmin):
    """A worker's record of an upload imported: read here, written only by the job."""

    list_display = ["id", "kind", "status", "user", "upload_name", "lines_read", "total_lines", "created_at"]
    list_filter = ["kind", "status"]


@admin.register(m.PublishedFigure)
class PublishedFigureAdmin(ReadOnlyAdmin):
    """A figure keeps what was shown; a correction is added beside it (`correct_figure`), never edited here."""

    list_display = ("run", "score", "n", "shown_to", "shown_at", "dataset_hash")
    search_fields = ("run__run_id", "shown_to")
    blind_run_field = "run_id"  # a figure is a run's score: hidden from staff who label that run blind


@admin.register(m.Correction)
class CorrectionAdmin(ReadOnlyAdmin):
    list_display = ("figure", "shown_score", "comparable_score", "comparable_n", "created_at")
    blind_run_field = "figure__run_id"


@admin.register(m.TrafficQuestion)
class TrafficQuestionAdmin(NoDeleteAdmin):
    list_display = ["dataset", "text", "count", "stratum", "stratum_source", "proposed_qid"]
    list_filter = ["stratum_source"]
    search_fields = ["text"]


@admin.register(m.TrafficRule)
class TrafficRuleAdmin(NoDeleteAdmin):
    list_display = ["dataset", "priority", "kind", "pattern", "stratum"]
