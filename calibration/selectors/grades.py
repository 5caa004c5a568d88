"""Grading a run's answers: the harness's own score where it gave one, else the question's rule.

Rules (INTERFACES.md `grading`): `span` and `extraction` are graded here by the pure rule verdicts
of evalstats.verdicts; `judge` uses the verdicts of a judge version whose gate passes, when there is
one, else the final human label; `rubric` (and a question without a rule) uses the final human
label from the queues. An answer none of these can grade is left out and counted, never guessed.

Reads only (values_list iterators, no model instances), so grading a million answers stays cheap.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from django.db import connections
from django.db.models import OuterRef, Subquery

from annotation.models import Answer, DatasetVersion, Run, VersionEntry
from annotation.selectors.disputes import disputed_qids, left_out
from calibration.backends import extraction_verdict, span_verdict
from calibration.models import GradedAnswer, GradingRun, JudgeVersion
from calibration.selectors.gates import judge_gates
from evalapp.db import column_strings_by, raw_values
from evalapp.keyset import in_values

RULES = {"span": span_verdict, "extraction": extraction_verdict}
HARNESS, HUMAN = "harness", "human"
# Above this many qids a filtered query is slower than streaming all of a run's answers (or, on
# PostgreSQL, a version's records) once.
_IN_CHUNK = 500
_STREAM_ABOVE = 20_000


@dataclass(frozen=True)
class RunGrades:
    """The answers of a run as sets of qids: graded `right`, graded `wrong`, and `unscored` (answered,
    but nothing could grade them yet), with how each grade was reached. Sets, not a qid -> bool map,
    so comparing runs is set algebra done in C and the counts fall out of it (comparisons.selectors).

    ``ungraded`` counts the unscored answers by reason (``awaiting human label``, ``rule could not
    grade and no human label``); ``disputed`` names those of them whose human labels disagree with no
    adjudication yet (annotation.selectors.disputes), which the summary counts and names.
    """

    run_id: str
    right: frozenset[str]
    wrong: frozenset[str]
    unscored: frozenset[str]
    sources: dict[str, int]
    ungraded: dict[str, int] = field(default_factory=dict)
    disputed: frozenset[str] = frozenset()

    @cached_property
    def scored(self) -> frozenset[str]:
        """Every graded qid."""
        return self.right | self.wrong

    @cached_property
    def answered(self) -> frozenset[str]:
        """Every qid the run answered, graded or not."""
        return self.scored | self.unscored if self.unscored else self.scored

    @cached_property
    def scores(self) -> dict[str, bool]:
        """qid -> correct for every graded answer."""
        return {**dict.fromkeys(self.wrong, False), **dict.fromkeys(self.right, True)}

    def tally(self, qids: Sequence[str]) -> tuple[int, int]:
        """(right, wrong): how many of these qids are graded right and wrong (unscored ones in neither).
        Two C-level passes of set lookups, no per-qid Python code."""
        return sum(map(self.right.__contains__, qids)), sum(map(self.wrong.__contains__, qids))

    @property
    def n_scored(self) -> int:
        return len(self.right) + len(self.wrong)

    def score(self) -> float | None:
        """Share of scored answers that are correct (None when nothing is scored)."""
        return len(self.right) / self.n_scored if self.n_scored else None

    def summary(self) -> dict:
        return {
            "answered": self.n_scored + len(self.unscored),
            "scored": self.n_scored,
            "score": self.score(),
            "sources": dict(self.sources),
            "ungraded": dict(self.ungraded),
            "disputed_left_out": left_out(self.disputed),
        }


def chunked(values: Iterable[str], size: int = _IN_CHUNK) -> Iterator[list[str]]:
    """Lists of at most `size` items, so `__in` filters stay under every database's parameter limit."""
    batch: list[str] = []
    for value in values:
        batch.append(value)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def version_records_for(version: DatasetVersion | None, qids: set[str]) -> dict[str, dict]:
    """qid -> question record (parsed) for those qids of a version, in one statement however many: each
    qid is looked up on the (version, qid) index and only its record text is read (on SQLite, streaming the
    whole version instead read every record's text: at a million lines with 50,000 wanted, several times
    longer); on PostgreSQL above _STREAM_ABOVE qids, one sequential pass."""
    if version is None or not qids:
        return {}
    base = VersionEntry.objects.filter(version=version)
    if len(qids) > _STREAM_ABOVE and connections[base.db].vendor == "postgresql":
        # On PostgreSQL the records of scattered qids are random heap reads (examples keyed by sha256): at a
        # million lines, 50,000 of them took longer than one sequential pass over the version's records.
        out: dict[str, dict] = {}
        for qid, text in base.values_list("qid", "example__canonical").iterator(chunk_size=5000):
            if qid in qids:
                out[qid] = json.loads(text)
        return out
    rows = base.filter(qid__in=in_values(qids))
    return {qid: json.loads(text) for qid, text in raw_values(rows, "qid", "example__canonical")}


def answer_values(run: Run, qids: set[str] | None, *fields: str) -> Iterator[tuple]:
    """(qid, *fields) of a run's answers, for the given qids (None: all), streamed."""
    base = Answer.objects.filter(run=run)
    if qids is None or len(qids) > _STREAM_ABOVE:
        for row in base.values_list("qid", *fields).iterator(chunk_size=10_000):
            if qids is None or row[0] in qids:
                yield row
        return
    yield from base.filter(qid__in=in_values(qids)).values_list("qid", *fields)


def rule_verdict(record: dict | None, answer: str) -> str | None:
    """ "correct"/"incorrect"/"invalid" by the record's span or extraction rule; None for other rules."""
    if record is None:
        return None
    rule = RULES.get(record.get("grading") or "")
    if rule is None:
        return None
    return rule(answer=answer, expected=record.get("expected"), gold_text=record.get("gold_text"))


def gated_judge_verdicts(run: Run, qids: set[str]) -> tuple[dict[str, bool], int | None]:
    """Verdicts on these answers from the newest finished, unforced grading of the run by a judge
    version whose gate passes now (calibration.models.GradingRun, calibration.selectors.gates).

    A version whose gate is fail, unmeasured or stale is not used, nor a forced grading: the caller
    falls back to the final human labels. Returns ({qid: correct}, judge_version_id)."""
    gradings = list(
        GradingRun.objects.filter(run=run, status="done", forced=False)
        .select_related("judge_version__judge")
        .order_by("-finished_at", "-id")
    )
    gates = judge_gates({g.judge_version_id for g in gradings})
    for grading in gradings:
        version = grading.judge_version
        if gates[version.pk]["status"] != "pass":
            continue
        verdicts: dict[str, bool] = {}
        for batch in chunked(sorted(qids)):
            for qid, verdict in GradedAnswer.objects.filter(grading=grading, answer__qid__in=batch).values_list(
                "answer__qid", "verdict"
            ):
                if verdict in ("correct", "incorrect"):  # "invalid" / "error" grade nothing
                    verdicts[qid] = verdict == "correct"
        return verdicts, version.pk
    return {}, None


# What a judge reads of a question record (calibration.services.grading._judge_item): a verdict on an
# answer still holds on another version of the question while these are unchanged.
JUDGE_INPUTS = ("question", "expected", "gold_text")
NO_PASSING_JUDGE = "no judge version passes its gate"


@dataclass(frozen=True)
class JudgeRescore:
    """Judge-graded answers re-scored by gate-passing judge versions: `verdicts` qid -> (correct,
    judge version id), `by_version` judge version id -> (label, how many), `not_rescored` qid -> why not."""

    verdicts: dict[str, tuple[bool, int]]
    by_version: dict[int, tuple[str, int]]
    not_rescored: dict[str, str]


def _judge_label(version: JudgeVersion) -> str:
    return f"{version.judge.name} v{version.number}"


def passing_judge_versions() -> list[JudgeVersion]:
    """Every judge version whose gate passes now, newest first."""
    versions = list(JudgeVersion.objects.select_related("judge").order_by("-pk"))
    gates = judge_gates(versions)
    return [v for v in versions if gates[v.pk]["status"] == "pass"]


def judge_rescore(
    run: Run, qids: set[str], *, passing_versions: Callable[[], list[JudgeVersion]] = passing_judge_versions
) -> JudgeRescore:
    """Re-score these answers of a run with the stored verdicts of gate-passing judge versions: for each
    answer the newest finished, unforced grading by such a version that gave it a verdict. A read: no
    judge is called; an answer no such grading covers is named with the `grade_run` command that would.
    `passing_versions` lets a caller re-scoring many runs work the gates out once."""
    if not qids:
        return JudgeRescore({}, {}, {})
    passing = passing_versions()
    if not passing:
        return JudgeRescore({}, {}, dict.fromkeys(qids, NO_PASSING_JUDGE))
    labels = {v.pk: _judge_label(v) for v in passing}
    verdicts: dict[str, tuple[bool, int]] = {}
    unreadable: dict[str, tuple[int, str]] = {}  # qid -> (version, "invalid"/"error") of the newest grading
    gradings = GradingRun.objects.filter(
        run=run, status="done", forced=False, judge_version_id__in=list(labels)
    ).order_by("-finished_at", "-id")
    for grading_id, version_id in gradings.values_list("pk", "judge_version_id"):
        todo = qids.difference(verdicts)
        if not todo:
            break
        for batch in chunked(sorted(todo)):
            for qid, verdict in GradedAnswer.objects.filter(grading_id=grading_id, answer__qid__in=batch).values_list(
                "answer__qid", "verdict"
            ):
                if verdict in ("correct", "incorrect"):
                    verdicts[qid] = (verdict == "correct", version_id)
                else:
                    unreadable.setdefault(qid, (version_id, verdict))
    newest = passing[0]
    not_rescored = {}
    for qid in qids.difference(verdicts):
        if qid in unreadable:
            version_id, verdict = unreadable[qid]
            not_rescored[qid] = f"{labels[version_id]} gave no verdict on the answer ({verdict})"
        else:
            not_rescored[qid] = (
                f"the answer was never graded by {labels[newest.pk]}; "
                f"run grade_run {run.run_id} --judge-version {newest.pk}"
            )
    counts = Counter(version_id for _, version_id in verdicts.values())
    return JudgeRescore(
        verdicts=verdicts,
        by_version={pk: (labels[pk], n) for pk, n in counts.items()},
        not_rescored=not_rescored,
    )


def _pending_by_rule(answers, version: DatasetVersion | None) -> tuple[dict[str, str], dict[str, set[str]], dict]:
    """The answers without a harness score: (qid -> final human verdict, grading rule -> their qids, the
    question records read on the way). The rule comes from the version's line, in the same statement as the
    answers; only a line that kept none (or a qid the version lacks) has its record read, one statement."""
    pending: dict[str, str] = {}
    rules: dict[str, str] = {}
    rows = answers.filter(correct__isnull=True)
    if version is not None:
        kept = VersionEntry.objects.filter(version=version, qid=OuterRef("qid")).values("grading")[:1]
        rows = rows.annotate(_rule=Subquery(kept))
        for qid, final, rule in raw_values(rows, "qid", "final_verdict", "_rule"):
            pending[qid] = final
            if rule is not None:
                rules[qid] = rule
    else:
        pending = dict(raw_values(rows, "qid", "final_verdict"))
    unknown = set(pending).difference(rules)
    records = version_records_for(version, unknown) if unknown else {}
    by_rule: dict[str, set[str]] = {}
    for qid in pending:
        rule = rules[qid] if qid in rules else (records.get(qid) or {}).get("grading") or ""
        by_rule.setdefault(rule, set()).add(qid)
    return pending, by_rule, records


def run_grades(run: Run, *, version: DatasetVersion | None = None) -> RunGrades:
    """Grade every answer of a run (see the module docstring); `version` defaults to the run's own."""
    version = version if version is not None else run.dataset_version
    answers = Answer.objects.filter(run=run)
    # The hot path of every comparison: the qids by harness score, one round trip off one index
    # (a million answers: about half a second). Keys are 1/0/None on SQLite, True/False/None on
    # PostgreSQL; 1 == True in a dict lookup.
    by_harness = column_strings_by(answers, "correct", "qid")
    right, wrong = [by_harness.get(True, [])], [by_harness.get(False, [])]
    sources: Counter = Counter({HARNESS: len(right[0]) + len(wrong[0])})
    ungraded: Counter = Counter()
    unscored: list[str] = []
    if None in by_harness:
        graded: dict[str, tuple[bool, str]] = {}  # qid -> (correct, source)
        pending, by_rule, records = _pending_by_rule(answers, version)
        rule_qids = by_rule.get("span", set()) | by_rule.get("extraction", set())
        if rule_qids:
            records.update(version_records_for(version, rule_qids.difference(records)))
            for qid, text in answer_values(run, rule_qids, "answer"):
                verdict = rule_verdict(records.get(qid), text)
                if verdict in ("correct", "incorrect"):
                    graded[qid] = (verdict == "correct", records[qid]["grading"])
        judge_qids = by_rule.get("judge", set())
        if judge_qids:
            verdicts, judge_version = gated_judge_verdicts(run, judge_qids)
            graded.update((qid, (ok, f"judge:{judge_version}")) for qid, ok in verdicts.items())
        for qid, final in pending.items():
            if qid in graded:
                continue
            if final in ("correct", "incorrect"):
                graded[qid] = (final == "correct", HUMAN)
            elif qid in rule_qids:
                ungraded["rule could not grade and no human label"] += 1
                unscored.append(qid)
            else:
                ungraded["awaiting human label"] += 1
                unscored.append(qid)
        right.append([qid for qid, (ok, _) in graded.items() if ok])
        wrong.append([qid for qid, (ok, _) in graded.items() if not ok])
        sources.update(source for _, source in graded.values())
    return RunGrades(
        run_id=run.run_id,
        right=frozenset().union(*right),
        wrong=frozenset().union(*wrong),
        unscored=frozenset(unscored),
        sources={k: v for k, v in sources.items() if v},
        ungraded=dict(ungraded),
        # Unscored because two labels disagree: named, so someone settles them (the adjudication list).
        disputed=frozenset(unscored).intersection(disputed_qids(run)) if unscored else frozenset(),
    )


def answer_grade(run: Run, qid: str, *, version: DatasetVersion | None = None) -> tuple[bool | None, str | None]:
    """(correct, source) of one answer of a run, by the same rules as `run_grades`; (None, None) ungraded."""
    row = Answer.objects.filter(run=run, qid=qid).values_list("answer", "correct", "final_verdict").first()
    if row is None:
        return None, None
    text, correct, final = row
    if correct is not None:
        return correct, HARNESS
    version = version if version is not None else run.dataset_version
    record = version_records_for(version, {qid}).get(qid)
    verdict = rule_verdict(record, text)
    if verdict in ("correct", "incorrect"):
        return verdict == "correct", record["grading"]
    if record is not None and record.get("grading") == "judge":
        verdicts, judge_version = gated_judge_verdicts(run, {qid})
        if qid in verdicts:
            return verdicts[qid], f"judge:{judge_version}"
    if final in ("correct", "incorrect"):
        return final == "correct", HUMAN
    return None, None
