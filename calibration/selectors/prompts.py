"""The item a prompt preview renders: one real answer of a dataset, as a judge would see it."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Answer
from annotation.selectors.blind import BlindScope
from annotation.selectors.datasets import dataset_get
from calibration.backends import JudgeItem
from calibration.models import SampleItem
from calibration.selectors.diagnostics import question_records


@dataclass(frozen=True)
class PreviewItem:
    """What the judge would see of one answer, and a sentence saying which answer it is."""

    item: JudgeItem
    source: str


def preview_item(*, dataset_name: str, scope: BlindScope, qid: str = "", judge_name: str = "") -> PreviewItem | None:
    """One answer of the dataset to render a prompt with: the newest run's answer to `qid` when given, else
    the first item of the judge's calibration sample of this dataset, else the answer to its first question.

    Never an answer of a run the viewer is labelling blind (a whole run, as everywhere): None when no
    other answer is left. NotFound for an unknown dataset.
    """
    dataset = dataset_get(dataset_name)
    answers = Answer.objects.filter(run__dataset=dataset).exclude(run__pk__in=scope.run_ids).select_related("run")
    answer, source = None, ""
    if qid:
        answer = answers.filter(qid=qid).order_by("-run__imported_at", "-pk").first()
    else:
        if judge_name:
            sample_item = (
                SampleItem.objects.filter(
                    sample__judge__name=judge_name, sample__dataset=dataset, answer__in=answers.values("pk")
                )
                .select_related("answer__run")
                .order_by("-sample__created_at", "position")
                .first()
            )
            if sample_item is not None:
                answer = sample_item.answer
                source = f", item {sample_item.position + 1} of {judge_name}'s calibration sample"
        if answer is None:
            answer = answers.order_by("qid", "-run__imported_at", "pk").first()
            source = f", the first question of {dataset.name}"
    if answer is None:
        return None
    record = question_records([answer]).get(answer.pk) or {}
    item = JudgeItem(
        run_id=answer.run.run_id,
        qid=answer.qid,
        question=record.get("question") or "",
        answer=answer.answer,
        expected=record.get("expected"),
        gold_text=record.get("gold_text"),
        stratum=record.get("stratum") or "",
    )
    return PreviewItem(item=item, source=f"answer of run {answer.run.run_id} to {answer.qid}{source}")
