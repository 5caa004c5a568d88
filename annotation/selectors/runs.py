"""System runs: lookup under the viewer's blind scope, final labels and harness scores."""

from collections.abc import Iterable

from annotation.models import PINNED, Answer, Run, missing_pins
from evalapp.errors import NotFound


def run_get(run_id: str, *, scope=None) -> Run:
    """The run by id, or NotFound naming it. With a viewer's blind `scope` (annotation.selectors.blind.blind_scope),
    PermissionDenied unless they may read its results (policies.can_read_run); None is the operator."""
    run = Run.objects.filter(run_id=run_id).first()
    if run is None:
        raise NotFound(f"unknown run {run_id!r}")
    if scope is not None:
        scope.check_run(run)
    return run


def final_labels(run: Run) -> dict[str, str]:
    """qid -> final human verdict for the answers of a run that have one."""
    return dict(Answer.objects.filter(run=run).exclude(final_verdict="").values_list("qid", "final_verdict"))


def run_scores(run: Run) -> dict[str, float]:
    """qid -> 1.0 / 0.0 for the answers of a run that are scored: the harness's own `correct`,
    else the final human label. Unscored answers are left out."""
    scores = {}
    for qid, correct, final in (
        Answer.objects.filter(run=run).values_list("qid", "correct", "final_verdict").iterator(chunk_size=10_000)
    ):
        if correct is not None:
            scores[qid] = 1.0 if correct else 0.0
        elif final:
            scores[qid] = 1.0 if final == "correct" else 0.0
    return scores


def pins_complete(run: Run) -> bool:
    """Whether the run's own record carried every pinned field and its dataset hash (a hash filled in
    at import from the latest version does not count: nobody said which version the run answered)."""
    return not missing_pins(run.record or {})


def repeats_of(run: Run, *, exclude_pks: Iterable[int] = ()) -> list[Run]:
    """Runs of the same system with every pinned input and the dataset hash unchanged (itself included),
    oldest first. A run with empty pins is a repeat of nothing (two runs that both left `model_snapshot`
    empty may differ in it), so it yields itself alone and is never one of another run's repeats."""
    if not pins_complete(run):
        return [run]
    same = (
        Run.objects.filter(system=run.system, dataset_hash=run.dataset_hash, **{k: getattr(run, k) for k in PINNED})
        .exclude(pk__in=list(exclude_pks))
        .select_related("dataset_version")
        .order_by("started_at", "run_id")
    )
    return [r for r in same if r.pk == run.pk or pins_complete(r)]
