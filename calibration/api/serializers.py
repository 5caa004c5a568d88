"""Input and output serializers for the calibration API."""
from rest_framework import serializers

from calibration.models import GradingRun, JudgeVersion
from calibration.selectors import public_params


class JudgeVersionCreateSerializer(serializers.Serializer):
    judge = serializers.CharField()
    backend = serializers.ChoiceField(choices=["span", "extraction", "openai", "replay"])
    model = serializers.CharField(required=False, allow_blank=True, default="")
    prompt_template = serializers.CharField(required=False, allow_blank=True, default="")
    rubric = serializers.CharField(required=False, allow_blank=True, default="")
    params = serializers.DictField(required=False, default=dict)
    threshold = serializers.FloatField(required=False)
    policy = serializers.ChoiceField(choices=["point", "lower_bound"], required=False)
    min_n = serializers.IntegerField(required=False, min_value=1)


class JudgeVersionSerializer(serializers.ModelSerializer):
    judge = serializers.CharField(source="judge.name")
    judge_version = serializers.IntegerField(source="pk")
    params = serializers.SerializerMethodField()

    class Meta:
        model = JudgeVersion
        fields = ["judge_version", "judge", "number", "backend", "model", "prompt_template", "params", "rubric",
                  "config_hash", "created_at"]

    def get_params(self, obj) -> dict:
        return public_params(obj.params)


class CalibrateSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    sample = serializers.IntegerField(required=False, default=100, min_value=1)
    seed = serializers.IntegerField(required=False, default=0)
    chunk_size = serializers.IntegerField(required=False, default=20, min_value=1)
    resample = serializers.BooleanField(required=False, default=False)


class GradeSerializer(serializers.Serializer):
    run_id = serializers.CharField()
    force = serializers.BooleanField(required=False, default=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class GradingRunSerializer(serializers.ModelSerializer):
    run_id = serializers.CharField(source="run.run_id")
    forced_by = serializers.CharField(source="forced_by.username", default=None)

    class Meta:
        model = GradingRun
        fields = ["id", "judge_version", "run_id", "status", "gate_status", "forced", "forced_by", "force_reason",
                  "total", "created_at", "finished_at"]
