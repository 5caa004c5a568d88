"""The pure rules of annotation.policies (no database), one truth table per can_x / check_can_x pair.

Every row is a situation with the answer the rule must give; each table's test asserts that can_x gives
it and that check_can_x raises (exactly the error type the callers map to 403 or 400) where, and only
where, can_x is False.
"""

from itertools import combinations

import pytest
from django.core.exceptions import PermissionDenied

from annotation import policies
from evalapp.errors import ServiceError

ENG, ADJ, ANN, EXP = "engineer", "adjudicator", "annotator", "expert"

# Every set of the four roles, the empty one included: the role-only tables below name all sixteen.
ALL_ROLE_SETS = {frozenset(c) for n in range(5) for c in combinations((ENG, ADJ, ANN, EXP), n)}


def assert_pair(can, check, facts: dict, allowed: bool, error: type[Exception], **check_only):
    """can(**facts) is `allowed`; check(**facts, **check_only) returns None when allowed and raises exactly
    `error` (not a subclass, not another error) when not. Returns the raised error for further asserts."""
    assert can(**facts) is allowed
    if allowed:
        assert check(**facts, **check_only) is None
        return None
    with pytest.raises(Exception) as raised:
        check(**facts, **check_only)
    assert type(raised.value) is error
    return raised.value


# --- roles alone -------------------------------------------------------------------------------

#                  roles                    manage queues  hold a label  join a pool
ROLE_RULES = [
    (set(), False, False, False),
    ({ANN}, False, True, True),
    ({ADJ}, True, False, False),
    ({ENG}, True, False, False),
    ({EXP}, False, False, False),
    ({ANN, ADJ}, True, True, True),
    ({ANN, ENG}, True, True, True),
    ({ANN, EXP}, False, True, True),
    ({ADJ, ENG}, True, False, False),
    ({ADJ, EXP}, True, False, False),
    ({ENG, EXP}, True, False, False),
    ({ANN, ADJ, ENG}, True, True, True),
    ({ANN, ADJ, EXP}, True, True, True),
    ({ANN, ENG, EXP}, True, True, True),
    ({ADJ, ENG, EXP}, True, False, False),
    ({ANN, ADJ, ENG, EXP}, True, True, True),
]


def test_the_role_table_names_every_set_of_roles_once():
    assert sorted(map(sorted, (frozenset(r[0]) for r in ROLE_RULES))) == sorted(map(sorted, ALL_ROLE_SETS))
    assert len(ROLE_RULES) == len(ALL_ROLE_SETS) == 16


@pytest.mark.parametrize("roles, allowed", [(r[0], r[1]) for r in ROLE_RULES])
def test_can_manage_queues(roles, allowed):
    """Engineers and adjudicators create queues and read their statistics."""
    error = assert_pair(
        policies.can_manage_queues, policies.check_can_manage_queues, {"roles": roles}, allowed, PermissionDenied
    )
    if error:
        assert str(error) == "Creating queues and reading their statistics needs the engineer or adjudicator role."


@pytest.mark.parametrize("roles, allowed", [(r[0], r[2]) for r in ROLE_RULES])
def test_can_hold_label(roles, allowed):
    """Only annotators hold labels, imported or made in a queue."""
    error = assert_pair(
        policies.can_hold_label, policies.check_can_hold_label, {"roles": roles}, allowed, ServiceError, username="x"
    )
    if error:
        assert error.message == (
            "user 'x' does not hold the annotator role; labels are held by annotators only "
            "(add_user x --role annotator …)"
        )


@pytest.mark.parametrize("roles, allowed", [(r[0], r[3]) for r in ROLE_RULES])
def test_can_join_pool(roles, allowed):
    """Only annotators are put in a queue's annotator pool."""
    error = assert_pair(
        policies.can_join_pool,
        policies.check_can_join_pool,
        {"roles": roles},
        allowed,
        ServiceError,
        username="u",
        field="annotators[0]",
    )
    if error:
        assert error.message == "u does not hold the annotator role; only annotators can be in a queue's annotator pool"
        assert [(p.field, p.message) for p in error.problems] == [("annotators[0]", "u is not an annotator")]


# --- pools and items ---------------------------------------------------------------------------

POOL = {1, 2}


@pytest.mark.parametrize(
    "user_id, pool_ids, allowed",
    [
        (1, POOL, True),  # in the pool
        (2, POOL, True),
        (3, POOL, False),  # not in the pool, whatever roles they hold (the rule takes none)
        (1, set(), False),  # an empty pool hands out nothing
    ],
)
def test_can_label(user_id, pool_ids, allowed):
    error = assert_pair(
        policies.can_label,
        policies.check_can_label,
        {"user_id": user_id, "pool_ids": pool_ids},
        allowed,
        PermissionDenied,
    )
    if error:
        assert str(error) == "You are not in this queue's annotator pool."


@pytest.mark.parametrize(
    "roles, in_pool, allowed",
    [
        (set(), True, True),  # a pool member opens the items handed to them...
        ({ANN}, True, True),
        ({ANN, ENG}, True, True),
        (set(), False, False),  # ...nobody else, unless they manage queues
        ({ANN}, False, False),
        ({EXP}, False, False),
        ({ANN, EXP}, False, False),
        ({ENG}, False, True),
        ({ADJ}, False, True),
        ({ANN, ADJ}, False, True),
        ({ADJ, ENG, EXP}, False, True),
    ],
)
def test_can_view_item(roles, in_pool, allowed):
    facts = {"user_id": 1, "roles": roles, "pool_ids": POOL if in_pool else {2}}
    error = assert_pair(policies.can_view_item, policies.check_can_view_item, facts, allowed, PermissionDenied)
    if error:
        assert str(error) == "You are not in this queue's annotator pool."


@pytest.mark.parametrize(
    "labels_in, overlap, allowed",
    [
        (0, 1, False),
        (1, 1, True),
        (0, 2, False),
        (1, 2, False),  # one of two labels in: the other annotator's label stays hidden
        (2, 2, True),
        (3, 2, True),  # a revised round may hold more than the overlap
        (2, 3, False),
        (3, 3, True),
    ],
)
def test_can_see_labels(labels_in, overlap, allowed):
    error = assert_pair(
        policies.can_see_labels,
        policies.check_can_see_labels,
        {"labels_in": labels_in, "overlap": overlap},
        allowed,
        PermissionDenied,
    )
    if error:
        assert str(error) == "Other labels on this item are hidden until all of its labels are in."


NOT_ADJUDICATOR = "Adjudicating needs the adjudicator role."
LABELLED_IT = "You labelled this item, so you cannot adjudicate it; another adjudicator must."


@pytest.mark.parametrize(
    "roles, labelled_it, message",
    [
        ({ADJ}, False, None),  # an adjudicator settles an item they did not label
        ({ADJ, ENG}, False, None),
        ({ADJ, ANN}, False, None),
        ({ADJ, ANN}, True, LABELLED_IT),  # never one of the item's annotators
        ({ADJ}, True, LABELLED_IT),
        ({ADJ, ENG, EXP}, True, LABELLED_IT),
        (set(), False, NOT_ADJUDICATOR),
        ({ANN}, False, NOT_ADJUDICATOR),
        ({ENG}, False, NOT_ADJUDICATOR),
        ({EXP}, False, NOT_ADJUDICATOR),
        ({ANN}, True, NOT_ADJUDICATOR),  # the role is named first
        ({ANN, ENG, EXP}, True, NOT_ADJUDICATOR),
    ],
)
def test_can_adjudicate(roles, labelled_it, message):
    facts = {"user_id": 1, "roles": roles, "annotator_ids": {1, 2} if labelled_it else {2, 3}}
    error = assert_pair(
        policies.can_adjudicate, policies.check_can_adjudicate, facts, message is None, PermissionDenied
    )
    if error:
        assert str(error) == message


@pytest.mark.parametrize(
    "user_id, originals, username, message",
    [
        (1, {2, 3}, "ann1", None),
        (1, set(), "ann1", None),
        (2, {2, 3}, "ann2", "ann2 made labels in the audited batch and cannot audit them blind"),
        (3, {2, 3}, "", "this user made labels in the audited batch and cannot audit them blind"),
    ],
)
def test_can_audit(user_id, originals, username, message):
    error = assert_pair(
        policies.can_audit,
        policies.check_can_audit,
        {"user_id": user_id, "original_annotator_ids": originals},
        message is None,
        ServiceError,
        username=username,
    )
    if error:
        assert error.message == message


# --- what an import may write ------------------------------------------------------------------

NIGHTLY = (4, "support nightly", "labelling")
AUDIT = (9, "june audit", "audit")
IN_NIGHTLY = "answer r/q-1 is in labelling queue 'support nightly' (id 4); its labels are made there, not imported"


@pytest.mark.parametrize(
    "queues, source, message",
    [
        ([], None, None),
        ([], "import", None),
        ([], "app", None),
        ([], "queue", "the label by 'ann1' on r/q-1 was made in a labelling queue; it is changed there, not imported"),
        ([NIGHTLY], None, IN_NIGHTLY),
        ([NIGHTLY], "import", IN_NIGHTLY),
        ([NIGHTLY], "queue", IN_NIGHTLY),  # the queue is named first
        (
            [AUDIT, NIGHTLY],
            "queue",
            "answer r/q-1 is in labelling queue 'support nightly' (id 4) and audit queue "
            "'june audit' (id 9); its labels are made there, not imported",
        ),
    ],
)
def test_can_import_label(queues, source, message):
    error = assert_pair(
        policies.can_import_label,
        policies.check_can_import_label,
        {"queues": queues, "label_source": source},
        message is None,
        ServiceError,
        answer="r/q-1",
        annotator="ann1",
    )
    if error:
        assert error.message == message


VERDICT_CHANGED = (
    "'ann1' labelled r/q-1 'correct' and this line says 'incorrect'; pass --replace with --reason "
    "(API: replace=true and reason) to replace it"
)
RATIONALE_CHANGED = (
    "'ann1' labelled r/q-1 'correct' with another rationale and this line says 'correct' with a new "
    "one; pass --replace with --reason (API: replace=true and reason) to replace it"
)


@pytest.mark.parametrize(
    "replace, reason, rationale_only, message",
    [
        (False, "", False, VERDICT_CHANGED),
        (False, "typo", False, VERDICT_CHANGED),  # a reason without replace is not a replace
        (True, "", False, VERDICT_CHANGED),
        (True, "   ", False, VERDICT_CHANGED),  # nor is a blank reason
        (True, "typo", False, None),
        (False, "", True, RATIONALE_CHANGED),
        (True, "   ", True, RATIONALE_CHANGED),
        (True, "typo", True, None),
    ],
)
def test_can_replace_label(replace, reason, rationale_only, message):
    new = "correct" if rationale_only else "incorrect"
    error = assert_pair(
        policies.can_replace_label,
        policies.check_can_replace_label,
        {"replace": replace, "reason": reason},
        message is None,
        ServiceError,
        annotator="ann1",
        answer="r/q-1",
        old="correct",
        new=new,
        rationale_only=rationale_only,
    )
    if error:
        assert error.message == message


# --- blindness that holds for the person -------------------------------------------------------

BLIND_RUNS = {7}
NOT_ENGINEER = "Reading runs, their answers and scores needs the engineer role."
BLIND_RUN = "you are labelling answers of run 7 blind; its results are hidden from you until those items are complete"


@pytest.mark.parametrize(
    "roles, run_id, message",
    [
        ({ENG}, 1, None),  # an engineer reads a run nobody makes them grade blind
        ({ENG}, 7, BLIND_RUN),  # ...but not one whose answer they label blind
        ({ENG, ANN}, 1, None),
        ({ENG, ANN}, 7, BLIND_RUN),
        ({ENG, ADJ}, 1, None),
        ({ENG, ADJ}, 7, BLIND_RUN),
        ({ENG, EXP}, 1, None),
        ({ENG, ADJ, ANN, EXP}, 7, BLIND_RUN),
        ({ADJ}, 1, NOT_ENGINEER),  # adjudicators settle items; runs are not theirs
        ({ADJ}, 7, NOT_ENGINEER),  # the role is named first
        ({ADJ, ANN}, 1, NOT_ENGINEER),
        ({ANN}, 1, NOT_ENGINEER),
        ({ANN}, 7, NOT_ENGINEER),
        ({EXP}, 1, NOT_ENGINEER),
        (set(), 1, NOT_ENGINEER),
    ],
)
def test_can_read_run(roles, run_id, message):
    error = assert_pair(
        policies.can_read_run,
        policies.check_can_read_run,
        {"roles": roles, "run_id": run_id, "blind_run_ids": BLIND_RUNS},
        message is None,
        PermissionDenied,
    )
    if error:
        assert str(error) == message


def test_check_can_read_run_names_the_run_and_the_queue_when_given():
    with pytest.raises(PermissionDenied) as blind:
        policies.check_can_read_run(
            roles={ENG}, run_id=7, blind_run_ids=BLIND_RUNS, run_name="nightly", queue_name="June"
        )
    assert str(blind.value) == (
        "you are labelling answers of run 'nightly' blind in queue 'June'; its results are "
        "hidden from you until those items are complete"
    )


@pytest.mark.parametrize(
    "answer_id, run_id, shows_run, allowed",
    [
        (10, 1, False, True),  # not blind, run not blind
        (10, 1, True, True),
        (11, 7, False, True),  # another answer of a blind run, where the run is not shown: visible
        (11, 7, True, False),  # ...where the run is shown: hidden (absence, subtraction)
        (12, 7, False, False),  # the blind answer itself: hidden either way
        (12, 7, True, False),
    ],
)
def test_can_read_answer(answer_id, run_id, shows_run, allowed):
    facts = {
        "answer_id": answer_id,
        "run_id": run_id,
        "blind_answer_ids": {12},
        "blind_run_ids": BLIND_RUNS,
        "shows_run": shows_run,
    }
    error = assert_pair(policies.can_read_answer, policies.check_can_read_answer, facts, allowed, PermissionDenied)
    if error:
        assert str(error) == (
            "you are labelling this answer (or another of its run) blind; its labels and verdicts "
            "are hidden from you until those items are complete"
        )


@pytest.mark.parametrize("roles", [r[0] for r in ROLE_RULES])
def test_can_list_disputes(roles):
    """Only adjudicators read the adjudication list, whatever else they hold."""
    allowed = ADJ in roles
    error = assert_pair(
        policies.can_list_disputes, policies.check_can_list_disputes, {"roles": roles}, allowed, PermissionDenied
    )
    if error:
        assert str(error) == "The adjudication list needs the adjudicator role."


@pytest.mark.parametrize(
    ("user_id", "is_staff", "owner_id", "allowed"),
    [
        (7, False, 7, True),  # the user who started it
        (7, True, 7, True),
        (8, True, 7, True),  # staff, anyone's
        (8, False, 7, False),  # another user: not found, not forbidden
    ],
)
def test_can_read_import_job(user_id, is_staff, owner_id, allowed):
    """An import job is read by the user who started it and by staff; to anyone else it does not exist."""
    facts = {"user_id": user_id, "is_staff": is_staff, "owner_id": owner_id}
    error = assert_pair(
        policies.can_read_import_job, policies.check_can_read_import_job, facts, allowed, ServiceError, job_id=17
    )
    if error:
        assert str(error) == "unknown import job 17" and error.status == 404


def test_every_pair_in_the_module_has_a_table_here():
    """A rule added to annotation.policies without a truth table fails here."""
    pairs = sorted(name[len("can_") :] for name in dir(policies) if name.startswith("can_"))
    assert pairs == sorted(name[len("test_can_") :] for name in globals() if name.startswith("test_can_"))
    assert all(callable(getattr(policies, f"check_can_{p}")) for p in pairs)
