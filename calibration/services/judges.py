"""Judges and their immutable versions: the config hash, operational parameters, the URL allow list."""

from __future__ import annotations

import hashlib
import json

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils.text import slugify

from annotation.models import Dataset
from calibration import policies
from calibration.backends import BACKENDS
from calibration.backends.prompt import template_problems
from calibration.models import CalibrationSample, Judge, JudgeVersion
from calibration.services.judge_criteria import criteria_known_problems, judge_criteria_checked
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import parse_json_text
from evalapp.validation import NAME_MAX, RUBRIC_MAX, SAMPLE_MAX, text_problem, whole_number_problem

# Parameters that change how a judge is reached, not what it says: left out of the config hash.
OPERATIONAL_PARAMS = ("base_url", "api_key", "timeout", "concurrency", "rate_limit", "max_attempts")


def config_hash(
    *, backend: str, model: str, prompt_template: str, params: dict, rubric: str, criteria: list | None = None
) -> str:
    """`sha256:` + sha256 of the canonical JSON of what decides the judge's verdicts. The names of the
    criteria it scores are part of it only when there are some, so a version without criteria keeps the
    hash it always had; their thresholds (gate settings) are not."""
    config: dict = {
        "backend": backend,
        "model": model or "",
        "prompt_template": prompt_template or "",
        "params": {k: v for k, v in sorted((params or {}).items()) if k not in OPERATIONAL_PARAMS},
        "rubric": rubric or "",
    }
    if criteria:
        config["criteria"] = sorted(c["name"] for c in criteria)
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _coerce_param(value):
    """Command-line k=v values: numbers and booleans as JSON would read them, else the string."""
    if not isinstance(value, str):
        return value
    # Strict JSON: "NaN" or "1e999" stay strings rather than become numbers no database stores.
    parsed, problem = parse_json_text(value)
    if problem is not None:
        return value
    return parsed if isinstance(parsed, (int, float, bool)) or parsed is None else value


def judge_url_allow_list() -> tuple[list[str], bool]:
    """The settings' URL prefixes a judge may call, and whether loopback addresses are allowed too."""
    return list(getattr(settings, "JUDGE_ALLOWED_BASE_URLS", [])), bool(
        getattr(settings, "JUDGE_ALLOW_LOOPBACK", False)
    )


@transaction.atomic
def judge_version_create(
    *,
    judge_name: str,
    backend: str,
    model: str = "",
    prompt_template: str = "",
    params: dict | None = None,
    rubric: str = "",
    threshold: float | None = None,
    policy: str | None = None,
    min_n: int | None = None,
    criteria: list | None = None,
    user=None,
) -> tuple[JudgeVersion, bool]:
    """The judge version with this configuration, created (with the judge if new) unless it exists.

    Returns (version, created). Threshold, policy and minimum n belong to the judge and are updated
    when given. For an existing version, operational parameters given (OPERATIONAL_PARAMS) replace the
    stored ones; they are outside the config hash because they never change a verdict.

    `criteria` ([{"name", "threshold"}]) names the dataset criteria the version scores beside its verdict
    (judge_criteria); for a judge already calibrated on a dataset each must be one that dataset defines
    (else the check is made when the version is calibrated). Their thresholds, like the judge's, are gate
    settings: given again for an existing version, they replace the stored ones.
    """
    problems = []
    if (
        not isinstance(judge_name, str)
        or not judge_name
        or slugify(judge_name) != judge_name
        or len(judge_name) > NAME_MAX
    ):
        problems.append(
            Problem(f"must be a slug (letters, digits, - and _) of at most {NAME_MAX} characters", field="judge")
        )
    for field, value, limit in (
        ("model", model or "", 300),
        ("prompt_template", prompt_template or "", RUBRIC_MAX),
        ("rubric", rubric or "", RUBRIC_MAX),
    ):
        found = text_problem(value, field, max_length=limit)
        if found is not None:
            problems.append(found)
    if isinstance(prompt_template, str):
        problems += [Problem(text, field="prompt_template") for text in template_problems(prompt_template)]
    if backend not in BACKENDS:
        problems.append(Problem(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}", field="backend"))
    if threshold is not None and not -1 <= threshold <= 1:
        problems.append(Problem(f"kappa threshold {threshold} is outside -1..1", field="threshold"))
    if policy is not None and policy not in policies.GATE_POLICIES:
        problems.append(
            Problem(f"unknown policy {policy!r}; expected one of {', '.join(policies.GATE_POLICIES)}", field="policy")
        )
    if min_n is not None:
        found = whole_number_problem(min_n, "min_n", minimum=1, maximum=SAMPLE_MAX)
        if found is not None:
            problems.append(found)
    if backend == "openai" and not model:
        problems.append(Problem("the openai backend needs --model (the model snapshot to call)", field="model"))
    checked_criteria, criteria_problems = judge_criteria_checked(criteria)
    problems += criteria_problems
    if checked_criteria and isinstance(judge_name, str):
        # A judge that has calibrated knows its datasets: an unknown criterion is refused now.
        for dataset in Dataset.objects.filter(
            pk__in=CalibrationSample.objects.filter(judge__name=judge_name).values("dataset_id")
        ).order_by("name"):
            problems += criteria_known_problems([c["name"] for c in checked_criteria], dataset)
    params = {k: _coerce_param(v) for k, v in (params or {}).items()}
    for key in ("concurrency", "timeout", "rate_limit", "max_attempts"):
        if key in params and (
            not isinstance(params[key], (int, float)) or isinstance(params[key], bool) or params[key] < 0
        ):
            problems.append(Problem("must be a non-negative number", field=f"param {key}"))
    if backend == "openai":
        base_url = params.get("base_url") or getattr(settings, "JUDGE_OPENAI_BASE_URL", "")
        allowed, loopback = judge_url_allow_list()
        if not policies.can_call_judge_url(str(base_url), allowed=allowed, loopback=loopback):
            problems.append(
                Problem(
                    policies.judge_url_refusal(str(base_url), allowed=allowed, loopback=loopback),
                    field="param base_url" if params.get("base_url") else "JUDGE_OPENAI_BASE_URL",
                )
            )
    if problems:
        raise ServiceError("cannot create the judge version; nothing was written", problems)
    judge, _ = Judge.objects.get_or_create(name=judge_name)
    judge = Judge.objects.select_for_update().get(pk=judge.pk)
    changed = []
    for field, value in (("threshold", threshold), ("policy", policy), ("min_n", min_n)):
        if value is not None and getattr(judge, field) != value:
            setattr(judge, field, value)
            changed.append(field)
    if changed:
        judge.save(update_fields=changed)
    digest = config_hash(
        backend=backend,
        model=model,
        prompt_template=prompt_template,
        params=params,
        rubric=rubric,
        criteria=checked_criteria,
    )
    existing = JudgeVersion.objects.select_for_update().filter(judge=judge, config_hash=digest).first()
    if existing is not None:
        if checked_criteria and checked_criteria != existing.criteria:
            existing.criteria = checked_criteria
            existing.save(update_fields=["criteria"])
        # What decides verdicts is immutable; how the judge is reached (base URL, key, concurrency, rate,
        # timeouts, attempts) may change, e.g. when the server moves or the key is rotated.
        operational = {k: v for k, v in params.items() if k in OPERATIONAL_PARAMS}
        current = {k: v for k, v in existing.params.items() if k in OPERATIONAL_PARAMS}
        if operational and operational != current:
            existing.params = {
                **{k: v for k, v in existing.params.items() if k not in OPERATIONAL_PARAMS},
                **operational,
            }
            existing.save(update_fields=["params"])
        return existing, False
    number = (judge.versions.aggregate(m=Max("number"))["m"] or 0) + 1
    version = JudgeVersion.objects.create(
        judge=judge,
        number=number,
        backend=backend,
        model=model or "",
        prompt_template=prompt_template or "",
        params=params,
        rubric=rubric or "",
        criteria=checked_criteria,
        config_hash=digest,
        created_by=user,
    )
    return version, True
