"""Human-human agreement on one of a dataset's criteria, from the values annotators gave a run's answers:
weighted kappa (quadratic by default on an ordinal scale) between the first two values of each answer, per
stratum and per annotator pair, Krippendorff's alpha with the matching metric over every value, and, when
the criterion has a pass rule, the agreement on its correct/incorrect reading beside them."""

from collections import defaultdict
from itertools import combinations
from typing import Any

from annotation.models import Criterion, CriterionLabel
from annotation.selectors.blind import BlindScope
from annotation.selectors.criterion_finals import criterion_finals
from annotation.selectors.datasets import version_strata
from annotation.selectors.runs import run_get
from evalapp.errors import NotFound, Problem, ServiceError
from evalstats.agreement import agreement
from evalstats.criteria import definition
from evalstats.multirater import multi_rater_agreement
from evalstats.report import agreement_report

WEIGHTS = ("none", "linear", "quadratic")
# The disputed answers the object names (all are counted).
DISPUTED_LISTED = 100


def finals_of(by_answer: dict[int, list[tuple[str, str]]]) -> dict[int, str | None]:
    """answer id -> its final value on the criterion: the value every annotator gave it (one annotator's
    value stands alone, as a verdict on an answer in no queue does), None when they differ (disputed,
    waiting for an adjudicator)."""
    return {
        answer_id: given[0][1] if len({v for _u, v in given}) == 1 else None for answer_id, given in by_answer.items()
    }


def criterion_agreement(
    *,
    run_id: str,
    criterion: str,
    weights: str | None = None,
    iters: int = 2000,
    seed: int = 0,
    scope: BlindScope | None = None,
) -> dict[str, Any]:
    """The agreement object of the criterion's values on the run (evalstats.report's, `a` the first value
    given on an answer and `b` the second; with more, every pair on an answer counts once), with
    `per_pair`, `multi_rater` (Fleiss' kappa and alpha over all values; alpha's metric ordinal or nominal
    by the kind) and `pass_rule` (the same over the values' correct/incorrect reading, or None).

    The scale's order is the definition's (its latest version): weights never follow an alphabetical
    order. `weights` defaults to quadratic on an ordinal criterion and none otherwise; weighting a
    categorical one is refused. Values given under an older version and missing from the latest are
    left out with a warning, as scikit-learn leaves out labels outside the given order. The figures name
    the run, so a viewer's blind `scope` that hides the run refuses it (run_get); None is the operator."""
    run = run_get(run_id, scope=scope)
    if run.dataset_id is None:
        raise NotFound(f"run {run_id!r} pins no dataset, so it has no criteria")
    found = Criterion.objects.filter(dataset_id=run.dataset_id, name=criterion).order_by("-number").first()
    if found is None:
        raise NotFound(f"run {run_id!r}'s dataset has no criterion {criterion!r}")
    rule = definition(found.name, found.kind, found.values, found.pass_rule)
    chosen = weights or ("quadratic" if rule.kind == "ordinal" else "none")
    if chosen not in WEIGHTS:
        raise ServiceError(
            f"unknown weights {chosen!r}", [Problem(f"must be one of {', '.join(WEIGHTS)}", field="weights")]
        )
    if chosen != "none" and rule.kind != "ordinal":
        raise ServiceError(
            f"{rule.name!r} is {rule.kind}: its values have no order to weight by",
            [Problem("weights need an ordinal criterion; use none", field="weights")],
        )
    weighting = None if chosen == "none" else chosen
    values = list(rule.values)
    by_answer: dict[int, list[tuple[str, str]]] = defaultdict(list)
    qids: dict[int, str] = {}
    for answer_id, qid, user, value in (
        CriterionLabel.objects.filter(answer__run=run, name=criterion)
        .order_by("answer_id", "labelled_at", "id")
        .values_list("answer_id", "answer__qid", "annotator__username", "value")
    ):
        by_answer[answer_id].append((user, value))
        qids[answer_id] = qid
    strata_of = version_strata(run.dataset_version)
    ids, a, b, strata = [], [], [], []
    pairs: dict[tuple[str, str], tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for answer_id, given in sorted(by_answer.items()):
        for (ua, va), (ub, vb) in combinations(given, 2):
            ids.append(f"{qids[answer_id]}:{ua}/{ub}")
            a.append(va)
            b.append(vb)
            strata.append(strata_of.get(qids[answer_id]) or "(none)")
            first, second = sorted((ua, ub))
            xs, ys = pairs[(first, second)]
            xs.append(va if first == ua else vb)
            ys.append(vb if first == ua else va)

    def pairwise(xs: list[str], ys: list[str]) -> dict[str, Any]:
        return agreement(xs, ys, labels=values, weights=weighting, positive=None).to_dict()

    report = (
        agreement_report(ids, a, b, strata, labels=values, weights=weighting, positive=None, iters=iters, seed=seed)
        if a
        else pairwise([], []) | {"bootstrap_ci95": None}
    )
    report["per_pair"] = {
        f"{ua}/{ub}": {
            k: v
            for k, v in pairwise(xs, ys).items()
            if k in ("n", "raw_agreement", "kappa", "weights", "reason", "confusion")
        }
        for (ua, ub), (xs, ys) in sorted(pairs.items())
    }
    flat = [(answer_id, user, value) for answer_id, given in sorted(by_answer.items()) for user, value in given]
    multi = multi_rater_agreement(
        [i for i, _u, _v in flat],
        [u for _i, u, _v in flat],
        [v for _i, _u, v in flat],
        labels=values,
        metric="ordinal" if rule.kind == "ordinal" else "nominal",
        iters=iters,
        seed=seed,
    ).to_dict()
    passing = None
    if rule.passing is not None:
        read = ["correct" if v in rule.passing else "incorrect" for v in a]
        read_b = ["correct" if v in rule.passing else "incorrect" for v in b]
        passing = {
            "rule": rule.pass_rule,
            **{
                k: v
                for k, v in agreement(read, read_b).to_dict().items()
                if k in ("n", "raw_agreement", "kappa", "reason", "confusion")
            },
        }
    # Final as the outputs read it: adjudicated, agreed, or within a queue's tolerance (criterion_finals).
    settled = criterion_finals(name=criterion, run_pk=run.pk)
    finals = {answer_id: settled.get(answer_id) for answer_id in by_answer}
    disputed = sorted(qids[a] for a, v in finals.items() if v is None)
    return {
        "run": run.run_id,
        "criterion": found.name,
        "version": found.number,
        "kind": found.kind,
        "values": values,
        "weights": chosen,
        "answers": len(by_answer),
        "single_valued": sum(1 for given in by_answer.values() if len(given) == 1),
        "agreed": sum(1 for v in finals.values() if v is not None),
        "disputed": len(disputed),
        "disputed_qids": disputed[:DISPUTED_LISTED],
        "agreement": report,
        "multi_rater": {
            k: multi[k]
            for k in ("n_items", "raters", "fleiss_kappa", "krippendorff_alpha", "alpha_ci95", "metric", "warnings")
        },
        "pass_rule": passing,
    }
