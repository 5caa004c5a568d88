"""Input and output serializers for the calibration API."""

from rest_framework import serializers

from calibration.api.gate_serializers import GateSerializer
from calibration.models import GradingRun, JudgeVersion
from calibration.selectors.judges import public_params
from evalapp.api import finite_number, whole_number
from evalapp.serializers import SampleLeftOutSerializer
from evalapp.validation import (
    NAME_MAX,
    RUBRIC_MAX,
    SAMPLE_MAX,
    STORED_SEED_MAX,
    TEXT_MAX,
)


class JudgeCriterionInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, help_text="a criterion of the dataset the judge calibrates on")
    threshold = finite_number(
        -1, 1, required=False, allow_null=True, help_text="the kappa the gate needs; none: not gated"
    )


class JudgeVersionCreateSerializer(serializers.Serializer):
    judge = serializers.CharField(max_length=NAME_MAX)
    backend = serializers.ChoiceField(choices=["span", "extraction", "openai", "replay"])
    model = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)
    prompt_template = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=RUBRIC_MAX, trim_whitespace=False
    )
    rubric = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=RUBRIC_MAX, trim_whitespace=False
    )
    params = serializers.DictField(required=False, default=dict)
    threshold = finite_number(-1, 1, required=False, help_text="the kappa the gate needs")
    policy = serializers.ChoiceField(choices=["point", "lower_bound"], required=False)
    min_n = whole_number(1, SAMPLE_MAX, required=False)
    criteria = JudgeCriterionInputSerializer(
        many=True, required=False, help_text="criteria the version scores beside its verdict"
    )


class JudgeVersionSerializer(serializers.ModelSerializer):
    judge = serializers.CharField(source="judge.name")
    judge_version = serializers.IntegerField(source="pk")
    params = serializers.SerializerMethodField()

    class Meta:
        model = JudgeVersion
        fields = [
            "judge_version",
            "judge",
            "number",
            "backend",
            "model",
            "prompt_template",
            "params",
            "rubric",
            "config_hash",
            "criteria",
            "created_at",
        ]

    def get_params(self, obj) -> dict:
        return public_params(obj.params)


class CalibrateSerializer(serializers.Serializer):
    dataset = serializers.CharField(max_length=NAME_MAX)
    sample = whole_number(1, SAMPLE_MAX, required=False, default=100)
    seed = whole_number(0, STORED_SEED_MAX, required=False, default=0)
    chunk_size = whole_number(1, 10_000, required=False, default=20)
    resample = serializers.BooleanField(required=False, default=False)
    repeats = whole_number(
        1, 20, required=False, default=1, help_text="judge each item this many times (2 to 20: self-consistency)"
    )


class GradeSerializer(serializers.Serializer):
    run_id = serializers.CharField(max_length=200)
    force = serializers.BooleanField(required=False, default=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=TEXT_MAX)
    chunk_size = whole_number(
        1,
        10_000,
        required=False,
        default=None,
        help_text="answers per worker task (default: sixteen rounds of the judge's concurrency, at least 50)",
    )


class GradingRunSerializer(serializers.ModelSerializer):
    run_id = serializers.CharField(source="run.run_id")
    forced_by = serializers.CharField(source="forced_by.username", default=None, allow_null=True)

    class Meta:
        model = GradingRun
        fields = [
            "id",
            "judge_version",
            "run_id",
            "status",
            "gate_status",
            "forced",
            "forced_by",
            "force_reason",
            "total",
            "chunk_size",
            "created_at",
            "finished_at",
        ]


class JudgeVersionRowSerializer(JudgeVersionSerializer):
    status = serializers.CharField(help_text="the gate's status: pass, fail, unmeasured or stale")

    class Meta(JudgeVersionSerializer.Meta):
        fields = [*JudgeVersionSerializer.Meta.fields, "status"]


class JudgeVersionCreatedSerializer(serializers.Serializer):
    judge_version = serializers.IntegerField()
    config_hash = serializers.CharField()
    created = serializers.BooleanField(help_text="false when this configuration already had a version")


class JudgeVersionDetailSerializer(JudgeVersionSerializer):
    gate = GateSerializer()

    class Meta(JudgeVersionSerializer.Meta):
        fields = [*JudgeVersionSerializer.Meta.fields, "gate"]


class VerdictImportResultSerializer(serializers.Serializer):
    judge_version = serializers.IntegerField()
    verdicts = serializers.IntegerField()
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class CalibrationRunProgressSerializer(serializers.Serializer):
    """A calibration run's progress (calibration.selectors.runs.calibration_run_progress)."""

    run = serializers.IntegerField()
    judge_version = serializers.IntegerField()
    status = serializers.CharField(help_text="queued, running, done, failed or cancelled")
    total = serializers.IntegerField()
    done = serializers.IntegerField(help_text="items with a verdict other than error")
    invalid = serializers.IntegerField()
    # DRF's metaclass takes declared fields off the class, so the `errors` property stays the serializer's.
    errors = serializers.IntegerField()  # type: ignore[assignment]
    pending = serializers.IntegerField()
    items_per_second = serializers.FloatField(allow_null=True)
    eta_seconds = serializers.FloatField(allow_null=True)
    message = serializers.CharField(allow_blank=True)
    started_at = serializers.CharField(allow_null=True)
    finished_at = serializers.CharField(allow_null=True)
    sample = serializers.IntegerField()
    dispatches = serializers.IntegerField(help_text="1 + how many times the run was resumed")
    repeats = serializers.IntegerField(help_text="how many times each item is judged (1: once)")


class CalibrationStartedSerializer(CalibrationRunProgressSerializer):
    created = serializers.BooleanField(help_text="false when a run of this version on this sample was already going")
    disputed_left_out = SampleLeftOutSerializer(
        help_text="the dataset's answers never drawn because their human labels disagree (until settled)"
    )


class GradingProgressSerializer(serializers.Serializer):
    """A grading run's progress (calibration.selectors.runs.grading_progress)."""

    grading = serializers.IntegerField()
    judge_version = serializers.IntegerField()
    run_id = serializers.CharField()
    status = serializers.CharField(help_text="queued, running, done, failed or cancelled")
    gate_status = serializers.CharField()
    forced = serializers.BooleanField()
    force_reason = serializers.CharField(allow_blank=True)
    total = serializers.IntegerField()
    graded = serializers.IntegerField(help_text="answers with a verdict, errors included")
    errors = serializers.IntegerField()  # type: ignore[assignment]  # see CalibrationRunProgressSerializer
    pending = serializers.IntegerField()
    verdicts = serializers.DictField(child=serializers.IntegerField(), help_text="verdict -> answers")
    message = serializers.CharField(allow_blank=True)
    chunk_size = serializers.IntegerField()
    dispatches = serializers.IntegerField(help_text="1 + how many times the grading was resumed")
    created_at = serializers.CharField()
    started_at = serializers.CharField(allow_null=True)
    finished_at = serializers.CharField(allow_null=True)
