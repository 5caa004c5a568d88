"""Pure permission and gate rules, in can_x / check_can_x pairs."""
from evalapp.errors import Problem, ServiceError
from evalapp.roles import ENGINEER, has_role

GATE_POLICIES = ("point", "lower_bound")
GATE_EXIT = {"pass": 0, "fail": 1, "unmeasured": 3, "stale": 3}


def can_manage_judges(user) -> bool:
    """Engineers create judge versions, start, cancel and resume calibrations, and grade runs."""
    return has_role(user, ENGINEER)


def can_read_judges(user) -> bool:
    """Engineers read judges, gates and disagreements (which name runs and per-answer verdicts);
    adjudicators settle items and see neither runs nor judges. The blind scope applies on top."""
    return has_role(user, ENGINEER)


def can_grade(*, gate_status: str, force: bool, reason: str) -> bool:
    """A judge version grades runs only when its gate passes, or when forced with a stated reason."""
    return gate_status == "pass" or (force and bool(reason.strip()))


def check_can_grade(*, gate_status: str, force: bool, reason: str) -> None:
    """Raise (exit 1 / HTTP 409) when the gate is not `pass` and the grading is not forced with a reason."""
    if can_grade(gate_status=gate_status, force=force, reason=reason):
        return
    if force:
        raise ServiceError("a forced grading needs a reason; it is recorded with the grading run",
                           [Problem("required when forcing", field="reason")])
    raise ServiceError(f"the judge version's gate is {gate_status!r}, not 'pass'; calibrate it first or force "
                       "the grading with a reason (the force is recorded)", code=1, status=409)
