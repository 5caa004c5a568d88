"""Judges and their versions: lookups, the parameters a reader may see, the overview and kappa history."""

from __future__ import annotations

import json

from annotation.selectors.blind import OPERATOR, BlindScope
from calibration.models import (
    Judge,
    JudgeVersion,
    Measurement,
    SampleItem,
)
from calibration.selectors.gates import (
    judge_gates,
    measurement_agreement,
)
from evalapp.errors import NotFound
from evalapp.validation import as_id

SECRET_PARAMS = ("api_key",)


def judge_version_get(judge_version_id) -> JudgeVersion:
    """A judge version by id, or NotFound naming it."""
    pk = as_id(judge_version_id)
    if pk is None:
        raise NotFound(f"unknown judge version {judge_version_id!r}")
    version = JudgeVersion.objects.select_related("judge").filter(pk=pk).first()
    if version is None:
        raise NotFound(f"unknown judge version {judge_version_id!r}")
    return version


def judge_get(name: str) -> Judge:
    """A judge by name, or NotFound naming it."""
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        raise NotFound(f"unknown judge {name!r}")
    return judge


def public_params(params: dict) -> dict:
    """Parameters safe to show: secrets masked."""
    return {k: ("***" if k in SECRET_PARAMS and v else v) for k, v in (params or {}).items()}


def judges_overview(*, scope: BlindScope = OPERATOR) -> list[dict]:
    """Every judge with its versions and each version's gate status (as the viewer may see it), in the
    same few statements however many versions there are (calibration.selectors.gates.judge_gates)."""
    judges = list(Judge.objects.prefetch_related("versions"))
    gates = judge_gates([v for judge in judges for v in judge.versions.all()], scope=scope)
    return [
        {"judge": judge, "versions": [{"version": v, "gate": gates[v.pk]} for v in judge.versions.all()]}
        for judge in judges
    ]


def kappa_history(judge: Judge, *, scope: BlindScope = OPERATOR) -> list[dict]:
    """Kappa of each version (its latest measurement) in version order, for the history chart; none for
    a version whose sample holds an answer in the viewer's blind `scope` (versions share samples).
    Three statements for any number of versions: the versions, their measurements, the blind samples."""
    versions = list(judge.versions.order_by("number"))
    latest: dict[int, Measurement] = {}
    for found in (
        Measurement.objects.filter(judge_version__in=versions)
        .select_related("run__sample")
        .order_by("-measured_at", "-id")
    ):
        latest.setdefault(found.judge_version_id, found)
    blind_samples: set[int] = set()
    if scope.blind and latest:
        blind_samples = set(
            SampleItem.objects.filter(
                sample_id__in={x.run.sample_id for x in latest.values()}, answer_id__in=scope.answer_ids_query()
            )
            .values_list("sample_id", flat=True)
            .distinct()
        )
    rows: list[dict] = []
    for version in versions:
        m = latest.get(version.pk)
        if m is None or m.run.sample_id in blind_samples:
            rows.append({"version": version.number, "id": version.pk, "kappa": None, "ci": None})
            continue
        ag = measurement_agreement(m)
        rows.append(
            {
                "version": version.number,
                "id": version.pk,
                "kappa": ag.kappa,
                "ci": m.bootstrap_ci95 or (list(ag.kappa_ci95) if ag.kappa_ci95 else None),
            }
        )
    return rows


def version_draft(*, judge: Judge, version_id: int | None = None) -> dict:
    """The new-version form's starting values: the judge's threshold and its version `version_id` (the latest
    when None) as a configuration to edit; secrets are left out (they are given again, or come from settings)."""
    version = judge.versions.filter(pk=version_id).first() if version_id else judge.versions.order_by("-number").first()
    if version_id and version is None:
        raise NotFound(f"judge {judge.name!r} has no version #{version_id}")
    values: dict = {"judge": judge.name, "threshold": judge.threshold, "backend": "span"}
    if version is not None:
        params = {k: v for k, v in (version.params or {}).items() if k not in SECRET_PARAMS}
        values.update(
            {
                "backend": version.backend,
                "model": version.model,
                "prompt_template": version.prompt_template,
                "rubric": version.rubric,
                "params": json.dumps(params, indent=2, ensure_ascii=False) if params else "",
                "number": version.number,
                "secrets_left_out": sorted(k for k in SECRET_PARAMS if (version.params or {}).get(k)),
            }
        )
        if version.criteria:
            values["criteria"] = criteria_text(version.criteria)
    return values


def criteria_text(criteria: list[dict]) -> str:
    """A version's criteria as the form and the command take them: `faithfulness=0.6, tone`."""
    return ", ".join(c["name"] + (f"={c['threshold']:g}" if c.get("threshold") is not None else "") for c in criteria)
