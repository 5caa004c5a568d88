"""Read-mostly admin: judge versions, verdicts and measurements are records, never edited by hand."""

from django.contrib import admin

from annotation.admin import BlindScopeAdmin
from calibration.models import (
    CalibrationRun,
    CalibrationSample,
    GradedAnswer,
    GradingRun,
    ImportedVerdict,
    Judge,
    JudgeVersion,
    Measurement,
    RepeatVerdict,
    SampleItem,
    Verdict,
)


class ReadOnly(BlindScopeAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "threshold", "policy", "min_n", "created_at"]
    search_fields = ["name"]


@admin.register(JudgeVersion)
class JudgeVersionAdmin(ReadOnly):
    list_display = ["id", "judge", "number", "backend", "model", "config_hash", "created_at"]
    list_filter = ["backend", "judge"]
    exclude = ["params"]  # may hold an api_key


@admin.register(CalibrationSample)
class SampleAdmin(ReadOnly):
    list_display = ["id", "judge", "dataset", "size", "seed", "dataset_hash", "created_at"]


@admin.register(SampleItem)
class SampleItemAdmin(ReadOnly):
    blind_run_field = "answer__run_id"
    list_display = ["sample", "position", "stratum", "answer"]
    list_select_related = ["answer__run"]


@admin.register(CalibrationRun)
class CalibrationRunAdmin(ReadOnly):
    list_display = ["id", "judge_version", "status", "total", "dispatches", "created_at", "finished_at"]
    list_filter = ["status"]


@admin.register(Verdict)
class VerdictAdmin(ReadOnly):
    blind_run_field = "item__answer__run_id"
    list_display = ["run", "item", "verdict", "human_verdict", "values", "latency_ms", "attempts"]
    list_filter = ["verdict"]


@admin.register(RepeatVerdict)
class RepeatVerdictAdmin(ReadOnly):
    # A judge's verdict on an answer: hidden from a staff member labelling that answer blind, as Verdict is.
    blind_run_field = "item__answer__run_id"
    list_display = ["run", "item", "repeat", "verdict", "latency_ms", "attempts"]
    list_filter = ["verdict"]


@admin.register(Measurement)
class MeasurementAdmin(ReadOnly):
    list_display = ["judge_version", "run", "n", "invalid", "dataset_hash", "measured_at"]


@admin.register(ImportedVerdict)
class ImportedVerdictAdmin(ReadOnly):
    blind_run_name_field = "run_id"
    list_display = ["judge_version", "run_id", "qid", "criterion", "verdict", "value", "imported_at"]


@admin.register(GradingRun)
class GradingRunAdmin(ReadOnly):
    blind_run_field = "run_id"
    list_display = ["id", "judge_version", "run", "status", "gate_status", "forced", "forced_by", "created_at"]
    list_filter = ["forced", "gate_status"]


@admin.register(GradedAnswer)
class GradedAnswerAdmin(ReadOnly):
    blind_run_field = "answer__run_id"
    list_display = ["grading", "answer", "verdict", "latency_ms"]
    list_filter = ["verdict"]
