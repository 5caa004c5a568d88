"""The experts' traffic page: coverage of the set's strata by production traffic, the unclassified
questions with a form to assign a stratum, the rules, and "Propose K to tag". Thin: parse, call a
selector or a service, render (POSTs redirect back to the page)."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse

from annotation.forms import CoverageForm, TrafficAssignForm, TrafficProposeForm, TrafficRuleForm
from annotation.selectors.datasets import dataset_get
from annotation.selectors.traffic import coverage_report, traffic_rules, unclassified_traffic
from annotation.services.traffic import traffic_assign, traffic_rule_add
from annotation.services.traffic_proposals import traffic_propose
from annotation.views.tagging import TAGGERS
from evalapp.errors import ServiceError
from evalapp.forms import page_text
from evalapp.roles import role_required

UNCLASSIFIED_SHOWN = 100


def _percent(share: float | None) -> float:
    return 0.0 if share is None else round(100 * share, 1)


@role_required(*TAGGERS)
def traffic_page(request, name):
    """GET: the coverage table, the unclassified questions, the rules. POST: assign, add a rule or propose."""
    dataset = dataset_get(name)
    unclassified = unclassified_traffic(dataset, limit=UNCLASSIFIED_SHOWN)
    if request.method == "POST":
        _post(request, dataset.name, [q["id"] for q in unclassified])
        return redirect(reverse("tagging-traffic", args=[dataset.name]) + _keep_n(request))
    try:
        n = CoverageForm(request.GET).parsed("the sample size is not valid; the set's size is used")["n"]
    except ServiceError as exc:
        n = None
        messages.error(request, page_text(exc))
    report = coverage_report(dataset, n=n)
    rows = [
        {
            **row,
            "traffic_pct": _percent(row["traffic_share"]),
            "set_pct": _percent(row["set_share"]),
            "budget_pct": _percent(row["budget_share"]),
        }
        for row in report["strata"]
    ]
    strata = sorted(dataset.strata_budget) if dataset.strata_budget else [r["stratum"] for r in rows]
    return render(
        request,
        "annotation/tagging/traffic.html",
        {
            "dataset": dataset,
            "report": report,
            "rows": rows,
            "unclassified_pct": _percent(report["unclassified"]["share"]),
            "unclassified": unclassified,
            "unclassified_shown": UNCLASSIFIED_SHOWN,
            "rules": traffic_rules(dataset),
            "strata": strata,
            "has_budget": bool(dataset.strata_budget),
        },
    )


def _keep_n(request) -> str:
    n = request.POST.get("n", "")
    return f"?n={n}" if n.isdigit() else ""


def _post(request, name: str, listed: list[int]) -> None:
    """Run the posted action and say what happened (or what was wrong) on the page it returns to."""
    action = request.POST.get("action")
    try:
        if action == "assign":
            f = TrafficAssignForm(request.POST, ids=listed).parsed("the assignment is not valid; nothing was changed")
            n = traffic_assign(dataset_name=name, ids=f["ids"], stratum=f["stratum"])
            messages.success(request, f"{n} question{'s' if n != 1 else ''} assigned to {f['stratum']}.")
        elif action == "rule":
            f = TrafficRuleForm(request.POST).parsed("the rule is not valid; nothing was changed")
            added = traffic_rule_add(
                dataset_name=name,
                stratum=f["stratum"],
                kind=f["kind"],
                pattern=f["pattern"],
                priority=f["priority"] if f["priority"] is not None else 0,
            )
            moved = added.reclassified
            messages.success(
                request,
                f"Rule added: {f['kind']} {f['pattern']!r} -> {f['stratum']}; "
                f"{moved} question{'s' if moved != 1 else ''} reclassified.",
            )
        elif action == "propose":
            f = TrafficProposeForm(request.POST).parsed("the proposal is not valid; nothing was added")
            seed = f["seed"] if f["seed"] is not None else 0
            proposed = traffic_propose(dataset_name=name, k=f["k"], seed=seed, user=request.user)
            if proposed:
                messages.success(
                    request,
                    f"{len(proposed)} traffic question{'s' if len(proposed) != 1 else ''} added to the tagging list: "
                    + ", ".join(p["qid"] for p in proposed),
                )
            else:
                messages.info(request, "No traffic question is left to propose (each is proposed once).")
        else:
            messages.error(request, "Unknown action; nothing was changed.")
    except ServiceError as exc:
        messages.error(request, page_text(exc))
