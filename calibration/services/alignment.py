"""The alignment loop without leakage: a new judge version whose prompt shows, as corrected few-shot
examples, items its predecessor got wrong, and which is never calibrated on those items."""

from __future__ import annotations

import random

from django.db import transaction

from calibration.backends.prompt import DEFAULT_PROMPT
from calibration.models import Verdict
from calibration.selectors.diagnostics import question_records
from calibration.selectors.gates import latest_measurement
from calibration.selectors.judges import judge_version_get
from calibration.services.calibration import held_out_answer_ids
from calibration.services.judges import judge_version_create
from evalapp.errors import Problem, ServiceError
from evalapp.validation import whole_number_problem

HUMAN_LABELS = ("correct", "incorrect")
EXAMPLES_MAX = 50


def _dollars(text: str) -> str:
    """Example text inside a template: a `$` in it must reach the judge as written, not as a placeholder."""
    return text.replace("$", "$$")


def _examples_block(rows: list[Verdict], questions: dict) -> str:
    parts = ["Examples graded by people (follow them):"]
    for n, v in enumerate(rows, 1):
        answer = v.item.answer
        record = questions.get(answer.pk, {})
        parts.append(
            f"Example {n}.\nQuestion: {_dollars(str(record.get('question', '')))}\n"
            f"Expected answer: {_dollars(str(record.get('expected') or '(none given)'))}\n"
            f"Answer: {_dollars(answer.answer)}\n"
            f'Correct verdict: {{"verdict": "{answer.final_verdict}"}}'
        )
    return "\n\n".join(parts) + "\n\n"


@transaction.atomic
def judge_version_propose(*, judge_version_id: int | str, examples: int, seed: int = 0, user=None) -> dict:
    """A new version of V's judge whose prompt template starts with K corrected examples: K items drawn
    (seeded) from V's latest measurement where its verdict differs from the final human verdict (agreed or
    adjudicated, as the answer holds it now). The examples' answer ids go to the new version's params as
    `held_out_exclude` (with V's own), so its calibration skips them. Returns the new version's id, hash,
    the example answer ids and how many disagreements there were to pick from."""
    problem = whole_number_problem(examples, "examples", minimum=1, maximum=EXAMPLES_MAX)
    if problem is not None:
        raise ServiceError("bad proposal options; nothing was written", [problem])
    version = judge_version_get(judge_version_id)
    measurement = latest_measurement(version)
    if measurement is None:
        raise ServiceError(
            f"judge version {version.pk} is not measured; calibrate it first",
            [Problem("has no measurement to learn from", field="judge_version")],
        )
    held = set(held_out_answer_ids(version))
    wrong = [
        v
        for v in Verdict.objects.filter(run_id=measurement.run_id)
        .select_related("item__answer__run__dataset")
        .order_by("item__position", "pk")
        if v.item.answer.final_verdict in HUMAN_LABELS
        and v.verdict != v.item.answer.final_verdict
        and v.item.answer_id not in held
    ]
    if len(wrong) < examples:
        raise ServiceError(
            f"judge version {version.pk} disagrees with the final human verdict on {len(wrong)} item(s); "
            f"cannot pick {examples} examples",
            [Problem(f"must be at most {len(wrong)}", field="examples")],
        )
    picked = sorted(random.Random(seed).sample(range(len(wrong)), examples))
    rows = [wrong[i] for i in picked]
    template = _examples_block(rows, question_records([v.item.answer for v in rows])) + (
        version.prompt_template or DEFAULT_PROMPT
    )
    example_ids = [v.item.answer_id for v in rows]
    params = {**(version.params or {}), "held_out_exclude": sorted(held | set(example_ids))}
    new, created = judge_version_create(
        judge_name=version.judge.name,
        backend=version.backend,
        model=version.model,
        prompt_template=template,
        params=params,
        rubric=version.rubric,
        criteria=version.criteria or None,
        user=user,
    )
    return {
        "judge_version": new.pk,
        "number": new.number,
        "config_hash": new.config_hash,
        "created": created,
        "from_version": version.pk,
        "examples": example_ids,
        "disagreements": len(wrong),
        "held_out_exclude": params["held_out_exclude"],
        "seed": seed,
    }
