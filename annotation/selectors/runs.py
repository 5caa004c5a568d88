"""System runs: lookup under the viewer's blind scope, final labels and harness scores."""

from annotation.models import Answer, Run
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
