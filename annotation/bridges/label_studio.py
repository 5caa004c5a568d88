"""Label Studio: its JSON export of annotated tasks read as human labels, and a run's answers written as
Label Studio tasks with their labels as annotations, plus a labelling configuration the tasks fit.

The shapes are Label Studio's published ones: "Label Studio JSON format of annotated tasks"
(labelstud.io/guide/export.html) for tasks, annotations and their `result` regions, and the tag
reference (labelstud.io/tags: Text, Header, Choices/Choice, Rating, TextArea) for the configuration.
A task's `data` carries the qid (and the run id, which must be the run named); each annotation is one
annotator's label: the `verdict` Choices is the verdict, every other Choices or Rating a criterion of
the run's dataset by its control's name, the `rationale` TextArea the rationale.
"""

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model

from annotation.bridges.foreign import BridgeOptions, Conversion, Item, join, read_items
from annotation.models import Answer, Criterion
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import version_records
from annotation.selectors.labels import labels_for_export
from annotation.selectors.runs import run_get
from evalapp.errors import Problem, ServiceError

VERDICT = "verdict"
RATIONALE = "rationale"
# Every control labels the answer shown.
TO_NAME = "answer"

_TASK_READ = frozenset({"data", "annotations"})
_DATA_READ = frozenset({"qid", "run_id"})
_ANNOTATION_READ = frozenset({"result", "completed_by", "created_at", "updated_at", "was_cancelled"})
_RESULT_READ = frozenset({"from_name", "type", "value"})


def labels_from_tasks(path: Path, options: BridgeOptions) -> Conversion:
    """A Label Studio JSON export as import_labels records on the run `options.run_id` (required): one
    verdict line per annotation holding a `verdict` choice, one criterion line per other choice or rating."""
    if not options.run_id:
        raise ServiceError(
            "--run names the system run the tasks' labels go on; it is required with --format label-studio",
            [Problem("required with --format label-studio", field="run")],
        )
    conversion = Conversion()
    items, conversion.problems = read_items(path, what="task")
    for item in items:
        _task(item, options, conversion)
    return conversion


def _task(item: Item, options: BridgeOptions, out: Conversion) -> None:
    task = item.value
    out.unmapped(task, _TASK_READ)
    data = task.get("data")
    if not isinstance(data, dict):
        out.problems.append(item.problem("missing: a task carries its data (qid) under data", "data"))
        return
    out.unmapped(data, _DATA_READ, "data")
    qid = data.get("qid")
    if not isinstance(qid, str) or not qid.strip():
        out.problems.append(item.problem("missing: the task's data names no qid", "data.qid"))
        return
    run_field = "--run"
    if "run_id" in data:
        run_field = "data.run_id"
        if data["run_id"] != options.run_id:
            out.problems.append(
                item.problem(f"the task is of run {data['run_id']!r}, not of --run {options.run_id!r}", run_field)
            )
            return
    annotations = task.get("annotations") or []
    if not isinstance(annotations, list):
        out.problems.append(item.problem("must be a list of annotations", "annotations"))
        return
    for a, annotation in enumerate(annotations):
        at = join("annotations", a)
        if not isinstance(annotation, dict):
            out.problems.append(item.problem("must be an annotation object", at))
            continue
        out.unmapped(annotation, _ANNOTATION_READ, at)
        if annotation.get("was_cancelled"):
            out.not_mapped.add("annotations[] with was_cancelled true (skipped tasks)")
            continue
        annotator = _annotator(annotation.get("completed_by"), options, item, join(at, "completed_by"), out)
        time_field = "updated_at" if annotation.get("updated_at") else "created_at"
        common = {"run_id": options.run_id, "qid": qid, "annotator": annotator}
        if annotation.get(time_field):
            common["labelled_at"] = annotation[time_field]
        fields = {
            "run_id": run_field,
            "qid": "data.qid",
            "annotator": join(at, "completed_by"),
            "labelled_at": join(at, time_field),
        }
        _annotation(annotation, at, common, fields, item, out)


def _annotator(given: Any, options: BridgeOptions, item: Item, where: str, out: Conversion) -> str | None:
    """The project username of a Label Studio user: --annotator ID=USERNAME (by id or e-mail) first, else
    the `username` this project's own export writes, else the e-mail; a bare user id needs the option."""
    keys: list[str] = []
    fallback = None
    if isinstance(given, dict):
        keys = [str(given[k]) for k in ("id", "email") if given.get(k) not in (None, "")]
        fallback = given.get("username") or given.get("email") or None
    elif isinstance(given, (int, str)) and not isinstance(given, bool):
        keys = [str(given)]
        fallback = given if isinstance(given, str) and not given.isdigit() else None
    for key in keys:
        if key in options.annotators:
            return options.annotators[key]
    if isinstance(fallback, str) and fallback.strip():
        return fallback
    shown = f"user id {keys[0]}" if keys else "no user"
    out.problems.append(
        item.problem(f"{shown} names no annotator here; give --annotator {keys[0] if keys else 'ID'}=USERNAME", where)
    )
    return None


def _annotation(annotation: dict, at: str, common: dict, fields: dict, item: Item, out: Conversion) -> None:
    results = annotation.get("result") or []
    if not isinstance(results, list):
        out.problems.append(item.problem("must be a list of result regions", join(at, "result")))
        return
    verdict: dict[str, Any] | None = None
    rationale: tuple[str, str] | None = None
    values: list[tuple[dict[str, Any], dict[str, str]]] = []
    for r, result in enumerate(results):
        where = join(join(at, "result"), r)
        if not isinstance(result, dict):
            out.problems.append(item.problem("must be a result object", where))
            continue
        out.unmapped(result, _RESULT_READ, where)
        name, kind, value = result.get("from_name"), result.get("type"), result.get("value")
        if not isinstance(value, dict):
            out.problems.append(item.problem("missing: a result carries its value", join(where, "value")))
            continue
        out.unmapped(value, {"choices", "rating", "text"}, join(where, "value"))
        if kind == "textarea" and name == RATIONALE:
            text = value.get("text")
            lines = [t for t in (text if isinstance(text, list) else [text]) if isinstance(t, str)]
            if not isinstance(text, (list, str)) or len(lines) != (len(text) if isinstance(text, list) else 1):
                out.problems.append(item.problem("must be a list of strings", join(where, "value.text")))
                continue
            rationale = ("\n".join(lines), join(where, "value.text"))
        elif kind in ("choices", "rating") and isinstance(name, str) and name:
            picked, source = _picked(kind, value, item, where, out)
            if picked is None:
                continue
            if name == VERDICT and kind == "choices":
                verdict = {**common, "verdict": picked.lower()}
                fields = {**fields, "verdict": source}
            else:
                values.append(
                    (
                        {**common, "criterion": name, "value": picked},
                        {**fields, "criterion": join(where, "from_name"), "value": source},
                    )
                )
        else:
            out.not_mapped.add(f"{at.split('[')[0]}[].result[] of type {kind!r} (control {name!r})")
    if rationale is not None and verdict is None:
        out.not_mapped.add("annotations[].result[] rationale of an annotation without a verdict")
    if verdict is not None:
        if rationale is not None:
            verdict["rationale"] = rationale[0]
            fields = {**fields, "rationale": rationale[1]}
        out.add(verdict, item.origin(fields))
    for record, record_fields in values:
        out.add(record, item.origin(record_fields))
    if verdict is None and not values:
        out.not_mapped.add("annotations[] without a verdict or criterion value")


def _picked(kind: str, value: dict, item: Item, where: str, out: Conversion) -> tuple[str | None, str]:
    """The one value a choices or rating result gives, as text (a rating 4 is the value "4")."""
    if kind == "rating":
        rating = value.get("rating")
        source = join(where, "value.rating")
        if isinstance(rating, bool) or not isinstance(rating, int):
            out.problems.append(item.problem("must be a whole number", source))
            return None, source
        return str(rating), source
    choices = value.get("choices")
    source = join(where, "value.choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], str):
        out.problems.append(item.problem("must be a list of exactly one choice", source))
        return None, source
    return choices[0], source


# ---------------------------------------------------------------------------------------------
# export


def _rating_scale(criterion: Criterion) -> int | None:
    """N when an ordinal criterion's values are exactly 1..N (a Rating control draws them), else None."""
    values = list(criterion.values)
    if criterion.kind == "ordinal" and values == [str(i) for i in range(1, len(values) + 1)]:
        return len(values)
    return None


def labelling_config(criteria: Iterable[Criterion]) -> str:
    """The Label Studio labelling configuration the exported tasks fit: the question, the answer, the
    expected answer and gold passage shown; the verdict, each criterion and the rationale as controls."""
    view = ET.Element("View")
    for name, title in (
        ("question", "Question"),
        ("answer", "Answer"),
        ("expected", "Expected answer"),
        ("gold_text", "Gold passage"),
    ):
        ET.SubElement(view, "Header", value=title)
        ET.SubElement(view, "Text", name=name, value=f"${name}")
    verdict = ET.SubElement(view, "Choices", name=VERDICT, toName=TO_NAME, choice="single", required="true")
    for value in ("correct", "incorrect"):
        ET.SubElement(verdict, "Choice", value=value)
    for criterion in criteria:
        scale = _rating_scale(criterion)
        if scale is not None:
            ET.SubElement(view, "Rating", name=criterion.name, toName=TO_NAME, maxRating=str(scale))
            continue
        control = ET.SubElement(view, "Choices", name=criterion.name, toName=TO_NAME, choice="single")
        for value in criterion.values:
            ET.SubElement(control, "Choice", value=value)
    ET.SubElement(view, "TextArea", name=RATIONALE, toName=TO_NAME, editable="true", rows="3")
    ET.indent(view)
    return ET.tostring(view, encoding="unicode") + "\n"


def _latest_criteria(run) -> dict[str, Criterion]:
    latest: dict[str, Criterion] = {}
    for c in Criterion.objects.filter(dataset_id=run.dataset_id).order_by("name", "number"):
        latest[c.name] = c
    return latest


def tasks_export(*, run_id: str, scope: BlindScope = OPERATOR) -> tuple[list[dict[str, Any]], str]:
    """(the run's answers as Label Studio tasks, sorted by qid, each annotator's labels as one annotation;
    the labelling configuration they fit). Under the viewer's blind scope, as export_labels is."""
    run = run_get(run_id, scope=scope)
    criteria = _latest_criteria(run)
    questions: dict[str, dict[str, Any]] = {}
    if run.dataset_version is not None:
        questions = {qid: json.loads(text) for qid, text in version_records(run.dataset_version)}
    by_answer: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for label in labels_for_export(run_id=run_id, scope=scope):
        by_answer.setdefault((label["qid"], label["annotator"]), []).append(label)
    users = _users({name for _qid, name in by_answer})
    annotations: dict[str, list[dict[str, Any]]] = {}
    for (qid, name), labels in by_answer.items():
        annotations.setdefault(qid, []).append(_annotation_of(labels, users.get(name, (None, "")), name, criteria))
    tasks = []
    for qid, answer in Answer.objects.filter(run=run).order_by("qid").values_list("qid", "answer"):
        record = questions.get(qid, {})
        tasks.append(
            {
                "data": {
                    "qid": qid,
                    "run_id": run.run_id,
                    "question": record.get("question") or "",
                    "answer": answer,
                    "expected": record.get("expected") or "",
                    "gold_text": record.get("gold_text") or "",
                },
                "annotations": annotations.get(qid, []),
                "predictions": [],
            }
        )
    return tasks, labelling_config(criteria.values())


def _users(names: set[str]) -> dict[str, tuple[int, str]]:
    rows = get_user_model().objects.filter(username__in=names).values_list("username", "pk", "email")
    return {name: (pk, email) for name, pk, email in rows}


def _annotation_of(labels: list[dict], user: tuple[int | None, str], name: str, criteria: dict) -> dict[str, Any]:
    """One annotator's labels on one answer as a Label Studio annotation (its time: the latest label's)."""
    result: list[dict[str, Any]] = []
    rationale = ""
    for label in labels:
        if "verdict" in label:
            result.append(_region(VERDICT, "choices", {"choices": [label["verdict"]]}))
            rationale = label.get("rationale") or ""
            continue
        criterion = criteria.get(label["criterion"])
        if criterion is not None and _rating_scale(criterion) is not None:
            result.append(_region(label["criterion"], "rating", {"rating": int(label["value"])}))
        else:
            result.append(_region(label["criterion"], "choices", {"choices": [label["value"]]}))
    if rationale:
        result.append(_region(RATIONALE, "textarea", {"text": [rationale]}))
    times = sorted(label["labelled_at"] for label in labels)
    pk, email = user
    return {
        "completed_by": {"id": pk, "email": email, "username": name},
        "created_at": times[0],
        "updated_at": times[-1],
        "was_cancelled": False,
        "ground_truth": False,
        "result": result,
    }


def _region(name: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"from_name": name, "to_name": TO_NAME, "type": kind, "value": value}
