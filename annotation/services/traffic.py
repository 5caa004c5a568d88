"""Production traffic: importing questions as asked (deduplicated against the set and earlier traffic),
the rules that give them a stratum, and assigning one by hand. A stratum set by hand is never changed
by a rule."""

import json
import re
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from django.db import transaction

from annotation.models import RULE_KINDS, Dataset, TrafficQuestion, TrafficRule
from annotation.selectors.datasets import working_records
from annotation.services.datasets import STRATUM_MAX
from annotation.traffic_text import first_match, normalize_text, text_key
from evalapp.errors import NotFound, Problem, ServiceError
from evalapp.jsonl import parse_time, read_jsonl, require_file
from evalapp.validation import ID_MAX, TEXT_MAX, raise_problems, text_problem

SOURCE_MAX = 100
PATTERN_MAX = 500
PRIORITY_MAX = 1_000_000
# The keys of a traffic line that are not metadata; every other key joins the line's metadata.
LINE_KEYS = ("question", "asked_at", "source", "metadata")


def _dataset(name: str, *, lock: bool = False) -> Dataset:
    rows = Dataset.objects.select_for_update() if lock else Dataset.objects
    dataset = rows.filter(name=name).first()
    if dataset is None:
        raise NotFound(f"unknown dataset {name!r}")
    return dataset


def _stratum_problem(dataset: Dataset, stratum: object) -> Problem | None:
    """A stratum must be a name, and one of the budget's when the dataset has a budget (a proposed question
    must pass the set's own checks)."""
    problem = text_problem(stratum, "stratum", max_length=STRATUM_MAX, required=True)
    if problem is None and dataset.strata_budget and stratum not in dataset.strata_budget:
        problem = Problem(
            f"stratum {stratum!r} is outside the dataset's budget ({', '.join(sorted(dataset.strata_budget))})",
            field="stratum",
        )
    return problem


def ordered_rules(dataset: Dataset) -> list[TrafficRule]:
    """The dataset's rules in precedence order: highest priority first, then the oldest."""
    return list(TrafficRule.objects.filter(dataset=dataset).order_by("-priority", "id"))


def set_texts(dataset: Dataset) -> set[str]:
    """The normalised question texts of the dataset's working copy (the latest version with its edits)."""
    return {normalize_text(str(item["record"].get("question") or "")) for item in working_records(dataset)}


@dataclass(frozen=True)
class TrafficImportResult:
    dataset: str
    import_batch: str
    lines: int
    added: int
    repeats: int  # lines that were a question already in the traffic (earlier or on a line above)
    in_set: int  # lines whose question is already in the set: counted, not stored
    classified: int  # of the added questions, how many a rule put in a stratum
    unclassified: int

    def as_dict(self) -> dict:
        return asdict(self)


def _parse_line(obj: dict, line: int, problems: list[Problem]) -> dict | None:
    """One traffic line's question, times, source and metadata, or None with its problems recorded."""
    found: list[Problem] = []
    question = obj.get("question")
    if question is None:
        found.append(Problem("missing required key", line=line, field="question"))
    else:
        problem = text_problem(question, "question", max_length=TEXT_MAX, required=True)
        if problem is None and not normalize_text(question):
            problem = Problem("has no words, only punctuation", field="question")
        if problem:
            found.append(Problem(problem.message, line=line, field="question"))
    asked_at = parse_time(obj.get("asked_at"), found, field="asked_at", line=line)
    source = obj.get("source")
    if source is not None:
        problem = text_problem(source, "source", max_length=SOURCE_MAX)
        if problem:
            found.append(Problem(problem.message, line=line, field="source"))
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        found.append(Problem("must be a JSON object", line=line, field="metadata"))
    problems.extend(found)
    if found:
        return None
    extra = {k: v for k, v in obj.items() if k not in LINE_KEYS}
    return {"text": question, "asked_at": asked_at, "source": source, "metadata": {**extra, **metadata}}


def _earlier(a: datetime | None, b: datetime | None) -> datetime | None:
    return min(a, b) if a and b else a or b


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    return max(a, b) if a and b else a or b


@transaction.atomic
def traffic_import(*, path: str | Path, dataset_name: str, source: str = "") -> TrafficImportResult:
    """Import production questions (JSON Lines: `question`, optional `asked_at` ISO time, `source`,
    `metadata` object; other keys join the metadata). A question already in the set is counted and not
    stored; one already in the traffic adds to that row's count. All or nothing."""
    raise_problems(
        "the source is not valid; nothing was imported", text_problem(source, "source", max_length=SOURCE_MAX)
    )
    dataset = _dataset(dataset_name, lock=True)
    problems: list[Problem] = []
    parsed = []
    for line, obj, problem in read_jsonl(require_file(path)):
        if problem:
            problems.append(problem)
        elif obj is not None:
            row = _parse_line(obj, line, problems)
            if row is not None:
                parsed.append(row)
    if problems:
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was imported", problems)
    in_set_texts = set_texts(dataset)
    existing = {q.normalized_text: q for q in TrafficQuestion.objects.filter(dataset=dataset)}
    rules = ordered_rules(dataset)
    batch = uuid.uuid4().hex
    new: dict[str, TrafficQuestion] = {}
    touched: dict[str, TrafficQuestion] = {}
    repeats = in_set = 0
    for row in parsed:
        normalized = normalize_text(row["text"])
        if normalized in in_set_texts:
            in_set += 1
            continue
        kept = new.get(normalized) or existing.get(normalized)
        if kept is not None:
            repeats += 1
            kept.count += 1
            kept.asked_at = _earlier(kept.asked_at, row["asked_at"])
            kept.last_asked_at = _later(kept.last_asked_at, row["asked_at"])
            if normalized not in new:
                touched[normalized] = kept
            continue
        rule = first_match(rules, row["text"], normalized, row["metadata"])
        new[normalized] = TrafficQuestion(
            dataset=dataset,
            text=row["text"],
            normalized_text=normalized,
            text_key=text_key(normalized),
            asked_at=row["asked_at"],
            last_asked_at=row["asked_at"],
            source=row["source"] if row["source"] is not None else source,
            metadata=json.dumps(row["metadata"], ensure_ascii=False),
            stratum=rule.stratum if rule else None,
            stratum_source="rule" if rule else "none",
            rule=rule,
            import_batch=batch,
        )
    TrafficQuestion.objects.bulk_create(new.values(), batch_size=1000)
    TrafficQuestion.objects.bulk_update(touched.values(), ["count", "asked_at", "last_asked_at"], batch_size=1000)
    classified = sum(1 for q in new.values() if q.stratum is not None)
    return TrafficImportResult(
        dataset=dataset.name,
        import_batch=batch,
        lines=len(parsed),
        added=len(new),
        repeats=repeats,
        in_set=in_set,
        classified=classified,
        unclassified=len(new) - classified,
    )


def _rule_pattern(kind: str, pattern: object) -> tuple[str, Problem | None]:
    """The pattern as stored, or a problem naming the option it came from."""
    problem = text_problem(pattern, kind, max_length=PATTERN_MAX, required=True)
    if problem is not None:
        return "", problem
    assert isinstance(pattern, str)
    if kind == "keyword" and not normalize_text(pattern):
        return "", Problem("has no words, only punctuation", field=kind)
    if kind == "regex":
        try:
            re.compile(pattern)
        except re.error as exc:
            return "", Problem(f"not a valid regular expression: {exc}", field=kind)
    if kind == "metadata":
        key, sep, _value = pattern.partition("=")
        if not sep or not key.strip():
            return "", Problem(f"{pattern[:60]!r} is not key=value", field=kind)
    return pattern, None


def reapply_rules(dataset: Dataset) -> int:
    """Give every question not assigned by hand the stratum of its first matching rule (or none);
    returns how many changed."""
    rules = ordered_rules(dataset)
    changed = []
    for q in TrafficQuestion.objects.filter(dataset=dataset).exclude(stratum_source="manual"):
        rule = first_match(rules, q.text, q.normalized_text, json.loads(q.metadata))
        stratum, origin = (rule.stratum, "rule") if rule else (None, "none")
        rule_id = rule.pk if rule else None
        if (q.stratum, q.stratum_source, q.rule_id) != (stratum, origin, rule_id):
            q.stratum, q.stratum_source, q.rule_id = stratum, origin, rule_id
            changed.append(q)
    TrafficQuestion.objects.bulk_update(changed, ["stratum", "stratum_source", "rule"], batch_size=1000)
    return len(changed)


@dataclass(frozen=True)
class RuleResult:
    rule: TrafficRule
    reclassified: int


@transaction.atomic
def traffic_rule_add(*, dataset_name: str, stratum: str, kind: str, pattern: str, priority: int = 0) -> RuleResult:
    """Add a rule and re-apply every rule to the questions not assigned by hand."""
    dataset = _dataset(dataset_name, lock=True)
    if kind not in RULE_KINDS:
        raise ServiceError(
            f"unknown rule kind {str(kind)[:40]!r}", [Problem(f"one of {', '.join(RULE_KINDS)}", field="kind")]
        )
    stored, pattern_problem = _rule_pattern(kind, pattern)
    priority_problem = None
    if isinstance(priority, bool) or not isinstance(priority, int) or abs(priority) > PRIORITY_MAX:
        priority_problem = Problem(f"must be a whole number from -{PRIORITY_MAX} to {PRIORITY_MAX}", field="priority")
    raise_problems(
        "the rule is not valid; nothing was changed",
        _stratum_problem(dataset, stratum),
        pattern_problem,
        priority_problem,
    )
    rule = TrafficRule.objects.create(dataset=dataset, stratum=stratum, kind=kind, pattern=stored, priority=priority)
    return RuleResult(rule=rule, reclassified=reapply_rules(dataset))


@transaction.atomic
def traffic_assign(*, dataset_name: str, ids: list[int], stratum: str) -> int:
    """Put these traffic questions in a stratum by hand (no rule changes them after); all or nothing.
    Returns how many were assigned."""
    dataset = _dataset(dataset_name, lock=True)
    bad_ids = [i for i in ids if isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= ID_MAX]
    raise_problems(
        "the assignment is not valid; nothing was changed",
        _stratum_problem(dataset, stratum),
        Problem("give at least one traffic question id", field="ids") if not ids else None,
        Problem(f"not traffic question ids: {', '.join(map(str, bad_ids[:10]))}", field="ids") if bad_ids else None,
    )
    wanted = set(ids)
    rows = list(TrafficQuestion.objects.select_for_update().filter(dataset=dataset, pk__in=wanted))
    missing = sorted(wanted - {q.pk for q in rows})
    if missing:
        raise ServiceError(
            f"no such traffic question in {dataset.name!r}; nothing was changed",
            [Problem(f"unknown id(s): {', '.join(map(str, missing[:20]))}", field="ids")],
        )
    for q in rows:
        q.stratum, q.stratum_source, q.rule = stratum, "manual", None
    TrafficQuestion.objects.bulk_update(rows, ["stratum", "stratum_source", "rule"])
    return len(rows)
