"""A measurement's disagreements on one criterion: the sample items where the judge's value differs from the
final human value (annotation.selectors.criterion_finals; on an ordinal scale the distance in ranks), for the
judge version page and `GET /api/judge-versions/ID/disagreements/?criterion=NAME`."""

from __future__ import annotations

from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.criterion_finals import criterion_finals
from calibration.models import JudgeVersion, Measurement, Verdict
from calibration.selectors.diagnostics import DIRECTIONS, disagreement_details
from evalapp.errors import Problem, ServiceError
from evalstats.invalid import INVALID

# On an ordinal criterion the verdict's directions read as ranks: the judge rates higher (passes more) or lower.
ORDINAL_DIRECTIONS = ("judge_passes", "judge_fails")


def check_criterion(version: JudgeVersion, name: str, direction: str = "") -> None:
    """400 naming `criterion` unless the version scores it, or `direction` unless it applies to it."""
    scored = [c["name"] for c in version.criteria or []]
    if name not in scored:
        raise ServiceError(
            "bad disagreement filters",
            [
                Problem(
                    f"the judge version does not score {name[:40]!r} (its criteria: {', '.join(scored) or 'none'})",
                    field="criterion",
                )
            ],
        )
    if direction and direction not in DIRECTIONS:
        raise ServiceError("bad disagreement filters", [Problem(f"unknown direction {direction!r}", field="direction")])


def criterion_disagreement_rows(
    measurement: Measurement, name: str, *, scope: BlindScope = OPERATOR, stratum: str = "", direction: str = ""
) -> list[dict]:
    """[{"verdict", "human", "judge", "distance"}] of the sample items where the judge's value on `name`
    differs from the final human value, in sample order: an item with no final human value (none given, or
    disputed) is no disagreement; a judge value outside the scale is `invalid` (distance null); on an ordinal
    scale `distance` is the rank difference (more than 0), else null. `direction` judge_passes / judge_fails
    keeps, on an ordinal scale, the items the judge rates higher / lower (refused on a categorical one),
    `invalid` the unreadable values. Items of runs in the viewer's blind `scope` are left out (each row names
    its run). Four statements at most: the verdicts and the final values (criterion_finals)."""
    figures = (measurement.criteria or {}).get(name)
    if figures is None:
        return []
    scale, kind = list(figures["values"]), figures["kind"]
    if direction in ORDINAL_DIRECTIONS and kind != "ordinal":
        raise ServiceError(
            "bad disagreement filters",
            [Problem(f"{direction} reads ranks: {name!r} is {kind}, not ordinal", field="direction")],
        )
    rows = Verdict.objects.filter(run=measurement.run)
    if scope.run_ids:
        rows = rows.exclude(item__answer__run_id__in=scope.run_ids)
    if stratum:
        rows = rows.filter(item__stratum=stratum)
    verdicts = list(rows.order_by("item__position", "pk").values_list("pk", "item__answer_id", "values"))
    finals = criterion_finals(name=name, answer_ids=[a for _pk, a, _v in verdicts])
    out = []
    for pk, answer_id, values in verdicts:
        human = finals.get(answer_id)
        if human not in scale:
            continue
        judge = (values or {}).get(name, INVALID)
        judge = judge if judge in scale else INVALID
        if judge == human:
            continue
        distance = scale.index(judge) - scale.index(human) if kind == "ordinal" and judge != INVALID else None
        if direction == "invalid" and judge != INVALID:
            continue
        if direction in ORDINAL_DIRECTIONS and (distance is None or (distance > 0) != (direction == "judge_passes")):
            continue
        out.append({"verdict": pk, "human": human, "judge": judge, "distance": abs(distance) if distance else None})
    return out


def criterion_disagreement_details(rows: list[dict]) -> list[dict]:
    """A page of criterion_disagreement_rows with their questions, answers and judge outputs (as the
    verdict's list shows them), `human` and `judge` the criterion's values and `distance` beside them."""
    details = disagreement_details([r["verdict"] for r in rows])
    return [
        {**d, "human": r["human"], "judge": r["judge"], "distance": r["distance"]}
        for d, r in zip(details, rows, strict=True)
    ]
