"""What a measurement shows beyond kappa: the disagreements, the human ceiling, and length bias."""

from __future__ import annotations

import json
from collections.abc import Iterable
from itertools import combinations

import numpy as np
from django.db import connection
from django.db.models import Case, Count, F, Max, Min, Q, QuerySet, Value, When
from django.db.models.functions import Length

from annotation.models import Answer, Dataset, HumanLabel, VersionEntry
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.datasets import latest_version
from annotation.selectors.disputes import disputed_answers
from calibration.models import (
    Measurement,
    SampleItem,
    Verdict,
)
from calibration.selectors.blind_samples import sample_is_blind
from calibration.selectors.summary import measurement_figure
from evalapp.keyset import ids_in
from evalstats import agreement_from_counts, dropped_labels_warnings
from evalstats.multirater import multi_rater_agreement


def question_records(answers) -> dict:
    """answer pk -> its question record in the answer's run's dataset version (latest version as fallback)."""
    by_version: dict = {}
    for answer in answers:
        version_id = answer.run.dataset_version_id
        if version_id is None and answer.run.dataset_id:
            latest = latest_version(answer.run.dataset)
            version_id = latest.pk if latest else None
        by_version.setdefault(version_id, []).append(answer)
    out = {}
    for version_id, group in by_version.items():
        if version_id is None:
            continue
        texts = dict(
            VersionEntry.objects.filter(version_id=version_id, qid__in={a.qid for a in group}).values_list(
                "qid", "example__canonical"
            )
        )
        for answer in group:
            if answer.qid in texts:
                out[answer.pk] = json.loads(texts[answer.qid])
    return out


DIRECTIONS = {
    "judge_passes": ("correct", "incorrect"),  # the judge passes what the humans failed
    "judge_fails": ("incorrect", "correct"),  # the judge fails what the humans passed
    "invalid": ("invalid", None),  # the judge's output could not be read
}


def disagreement_ids(
    measurement: Measurement,
    *,
    scope: BlindScope = OPERATOR,
    stratum: str = "",
    direction: str = "",
) -> QuerySet:
    """The ids of the verdicts where the judge and the final human label differ, in sample order, filtered
    by the database: count it, slice a page of it, then hand the page to `disagreement_details`. Only one
    stratum's, or one direction's (DIRECTIONS), when asked; items of runs in the viewer's blind `scope` are
    left out (each row names its run)."""
    rows = Verdict.objects.filter(run=measurement.run).exclude(human_verdict="").exclude(verdict=F("human_verdict"))
    # Only a filter that needs them joins the items and answers, so the count reads the verdicts alone.
    if scope.run_ids:
        rows = rows.exclude(item__answer__run_id__in=scope.run_ids)
    if stratum:
        rows = rows.filter(item__stratum=stratum)
    if direction in DIRECTIONS:
        judge, human = DIRECTIONS[direction]
        rows = rows.filter(verdict=judge) if human is None else rows.filter(verdict=judge, human_verdict=human)
    return rows.order_by("item__position", "pk").values_list("pk", flat=True)


DISAGREEMENT_FIELDS = (
    "item__answer_id",
    "item__answer__qid",
    "item__answer__answer",
    "item__answer__run__run_id",
    "item__answer__run__dataset_id",
    "item__answer__run__dataset_version_id",
    "item__stratum",
    "human_verdict",
    "verdict",
    "raw_output",
    "reason",
)


def disagreement_details(verdict_ids: Iterable[int]) -> list[dict]:
    """The disagreements of a page of `disagreement_ids` (a slice of it, or any verdict ids), with their
    answer and outputs and their question, gold passage and expected answer from the question record of the
    answer's run's dataset version (the dataset's latest as fallback), in sample order. A slice goes to the
    database as a subquery, so it sorts only ids and positions before it joins the page's few answers: one
    statement for the page and one per version it spans."""
    rows = list(
        Verdict.objects.filter(pk__in=verdict_ids).order_by("item__position", "pk").values(*DISAGREEMENT_FIELDS)
    )
    latest: dict[int, int | None] = {}
    wanted: dict[int | None, set[str]] = {}
    for r in rows:
        version_id = r["item__answer__run__dataset_version_id"]
        dataset_id = r["item__answer__run__dataset_id"]
        if version_id is None and dataset_id:
            if dataset_id not in latest:
                found = Dataset.objects.filter(pk=dataset_id).first()
                version = latest_version(found) if found else None
                latest[dataset_id] = version.pk if version else None
            version_id = latest[dataset_id]
        r["_version"] = version_id
        wanted.setdefault(version_id, set()).add(r["item__answer__qid"])
    texts: dict[tuple[int, str], str] = {}
    for version_id, qids in wanted.items():
        if version_id is None:
            continue
        for qid, text in VersionEntry.objects.filter(version_id=version_id, qid__in=qids).values_list(
            "qid", "example__canonical"
        ):
            texts[(version_id, qid)] = text
    out = []
    for r in rows:
        found_text = texts.get((r["_version"], r["item__answer__qid"]))
        record = json.loads(found_text) if found_text else {}
        out.append(
            {
                "run_id": r["item__answer__run__run_id"],
                "qid": r["item__answer__qid"],
                "stratum": r["item__stratum"],
                "question": record.get("question", ""),
                "gold_text": record.get("gold_text"),
                "expected": record.get("expected"),
                "answer": r["item__answer__answer"],
                "human": r["human_verdict"],
                "judge": r["verdict"],
                "judge_output": r["raw_output"],
                "reason": r["reason"],
            }
        )
    return out


def disagreements(
    measurement: Measurement,
    *,
    limit: int = 500,
    scope: BlindScope = OPERATOR,
    stratum: str = "",
    direction: str = "",
) -> list[dict]:
    """Items where the judge and the final human label differ, with question, gold passage and outputs
    (the first `limit` of `disagreement_ids`, with `disagreement_details`)."""
    rows = disagreement_ids(measurement, scope=scope, stratum=stratum, direction=direction)
    return disagreement_details(rows[:limit])


def human_ceiling(measurement: Measurement, *, scope: BlindScope = OPERATOR) -> dict | None:
    """Human-human agreement, the judge's ceiling, over the sample's double-labelled answers and the
    dataset's unresolved disagreements (disputed answers: labels disagree, nobody settled them). A sample
    never draws those (they carry no final label), so without them the ceiling would count only the
    disagreements someone resolved. Every pair of labels on an answer counts once (first label first).

    {"kappa", "raw_agreement", "n" (pairs), "answers", "unresolved", "agreement", "multi_rater"}; None
    when no answer has two labels, or when the sample holds an answer in the viewer's blind `scope`
    (disputed answers in it are left out). `multi_rater` is Krippendorff's alpha (nominal) over the
    answers with three or more labels, where pairwise kappa mixes raters (None when there are none).

    Read live (the labels change), in a handful of statements whatever the sample's size: the database
    counts the label pairs; only the labels of answers with three or more come back to be read one by one.
    """
    if sample_is_blind(measurement, scope):
        return None
    sample = measurement.run.sample
    unresolved = _unresolved(sample, scope)
    labelled = HumanLabel.objects.filter(_labelled(sample.pk, unresolved))
    shapes, by_answer, raters = _label_shapes(labelled)
    labels = ["correct", "incorrect"]
    cells = {(a, b): 0 for a in labels for b in labels}
    total = 0
    # Two labels that agree make one pair of that verdict whatever their order; every other answer with
    # two labels or more was read label by label, in order.
    for (k, lowest, highest), answers in shapes.items():
        if k == 2 and lowest == highest:
            total += answers
            if (lowest, lowest) in cells:
                cells[(lowest, lowest)] += answers
    for verdicts in by_answer.values():
        for pair in combinations(verdicts, 2):
            total += 1
            if pair in cells:
                cells[pair] += 1
    if not total:
        return None
    counts = [[cells[(a, b)] for b in labels] for a in labels]
    ag = agreement_from_counts(
        counts,
        labels,
        positive="correct",
        extra_warnings=dropped_labels_warnings(total - sum(cells.values()), labels),
    )
    many = {a: v for a, v in by_answer.items() if len(v) >= 3}
    return {
        "kappa": ag.kappa,
        "raw_agreement": ag.raw_agreement,
        "n": ag.n,
        "answers": sum(n for (k, _lo, _hi), n in shapes.items() if k >= 2),
        # A disputed answer has two verdicts among its labels, so two labels at least.
        "unresolved": len(unresolved),
        "agreement": ag,
        "multi_rater": _multi_rater(many, {a: raters[a] for a in many}),
    }


def _unresolved(sample, scope: BlindScope) -> set[int]:
    """The dataset's disputed answers outside the sample that the viewer may read. A disputed answer's
    final label is withdrawn until someone settles it (annotation.services.labels keeps it in step), so
    only the answers without one are looked at."""
    disputed = disputed_answers(answers=Answer.objects.filter(run__dataset_id=sample.dataset_id, final_verdict=""))
    if not disputed:
        return set()
    sampled = set(
        SampleItem.objects.filter(sample_id=sample.pk, answer_id__in=ids_in(d.answer_id for d in disputed))
        .order_by()
        .values_list("answer_id", flat=True)
    )
    return {
        d.answer_id
        for d in disputed
        if d.answer_id not in sampled and scope.can_read_answer(d.answer_id, d.run_pk, shows_run=True)
    }


def _labelled(sample_id: int, unresolved: set[int]) -> Q:
    """The labels the ceiling reads: on the sample's answers (a subquery, so the database joins them rather
    than parse thousands of ids) and on the unresolved answers."""
    in_sample = SampleItem.objects.filter(sample_id=sample_id).order_by().values("answer_id")
    where = Q(answer_id__in=in_sample)
    if unresolved:
        where |= Q(answer_id__in=ids_in(unresolved))
    return where


def _label_shapes(labelled: QuerySet) -> tuple[dict[tuple[int, str, str], int], dict, dict]:
    """How the labels fall on their answers, in two statements whatever their number: (labels on the
    answer, lowest verdict, highest verdict) -> how many answers, counted by the database; and, read label
    by label in order (labelled_at, then annotator), the verdicts and annotators of the few answers whose
    pairs that count cannot tell: three labels or more, or two that disagree (which came first matters)."""
    per_answer = (
        labelled.order_by().values("answer_id").annotate(k=Count("pk"), lowest=Min("verdict"), highest=Max("verdict"))
    )
    inner, params = per_answer.values("k", "lowest", "highest").query.sql_with_params()
    with connection.cursor() as cursor:
        # The ORM cannot group by an aggregate: the per-answer tallies are grouped again around its query.
        cursor.execute(f"SELECT k, lowest, highest, COUNT(*) FROM ({inner}) tally GROUP BY k, lowest, highest", params)
        shapes = {(int(k), lowest, highest): int(n) for k, lowest, highest, n in cursor.fetchall()}
    by_answer: dict[int, list[str]] = {}
    raters: dict[int, list[int]] = {}
    if any(k >= 3 or (k == 2 and lowest != highest) for k, lowest, highest in shapes):
        mixed = per_answer.filter(Q(k__gte=3) | Q(k=2, lowest__lt=F("highest"))).values("answer_id")
        for answer_id, verdict, annotator_id in (
            HumanLabel.objects.filter(answer_id__in=mixed)
            .order_by("answer_id", "labelled_at", "annotator_id")
            .values_list("answer_id", "verdict", "annotator_id")
        ):
            by_answer.setdefault(answer_id, []).append(verdict)
            raters.setdefault(answer_id, []).append(annotator_id)
    return shapes, by_answer, raters


MIN_ALPHA_CI_ANSWERS = 10


def _multi_rater(by_answer: dict[int, list[str]], raters: dict[int, list[int]]) -> dict | None:
    """Krippendorff's alpha (nominal) and Fleiss' kappa over the answers with three or more labels."""
    many = [a for a, verdicts in by_answer.items() if len(verdicts) >= 3]
    if not many:
        return None
    items = [a for a in many for _ in by_answer[a]]
    who = [r for a in many for r in raters[a]]
    ratings = [v for a in many for v in by_answer[a]]
    m = multi_rater_agreement(items, who, ratings, labels=["correct", "incorrect"], metric="nominal")
    return {
        "answers": m.n_items,
        "raters": m.raters,
        "ratings": m.n_ratings,
        "metric": m.metric,
        "krippendorff_alpha": m.krippendorff_alpha,
        # A bootstrap over a handful of answers only reshuffles them: no interval below ten.
        "alpha_ci95": list(m.alpha_ci95) if m.alpha_ci95 and m.n_items >= MIN_ALPHA_CI_ANSWERS else None,
        "fleiss_kappa": m.fleiss_kappa,
    }


def length_bias(measurement: Measurement, *, scope: BlindScope = OPERATOR) -> list[dict]:
    """Judge pass rate minus human pass rate by answer-length quartile (a judge that favours long answers
    shows a rising line). Quartiles by character count over the measured items, ties in sample-item order;
    none for a viewer whose blind `scope` holds a sample answer. Read from the measured verdicts and the
    answers' texts, which never change: worked out once per measurement (calibration.selectors.summary)."""
    if sample_is_blind(measurement, scope):
        return []
    return measurement_figure(measurement, "length_bias", lambda: _length_bias(measurement))


def _length_bias(measurement: Measurement) -> list[dict]:
    # The database measures the lengths (LENGTH counts characters on SQLite and PostgreSQL alike) and says
    # which verdicts pass, so four integers an item come back through the cursor, unsorted, without the
    # ORM's per-row work; numpy sorts them by (length, item id) and sums each quarter of the sorted list.
    passes = Case(When(verdict="correct", then=Value(1)), default=Value(0))
    human_passes = Case(When(human_verdict="correct", then=Value(1)), default=Value(0))
    rows = (
        Verdict.objects.filter(run=measurement.run)
        .exclude(human_verdict="")
        .order_by()
        .values_list("item_id", Length("item__answer__answer"), passes, human_passes)
    )
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = np.asarray(cursor.fetchall(), dtype=np.int64).reshape(-1, 4)
    n = len(found)
    if not n:
        return []
    ordered = found[np.lexsort((found[:, 0], found[:, 1]))]
    out = []
    for q in range(4):
        lo, hi = q * n // 4, (q + 1) * n // 4
        if hi <= lo:
            continue
        size = hi - lo
        judge_rate = int(ordered[lo:hi, 2].sum()) / size
        human_rate = int(ordered[lo:hi, 3].sum()) / size
        out.append(
            {
                "quartile": q + 1,
                "n": size,
                "min_chars": int(ordered[lo, 1]),
                "max_chars": int(ordered[hi - 1, 1]),
                "judge_pass_rate": judge_rate,
                "human_pass_rate": human_rate,
                "difference": judge_rate - human_rate,
            }
        )
    return out
