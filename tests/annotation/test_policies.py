"""The pure rules of annotation.policies: blindness, pools and labels (no database)."""
import pytest
from django.core.exceptions import PermissionDenied

from annotation import policies
from evalapp.errors import ServiceError

ENG, ADJ, ANN, EXP = "engineer", "adjudicator", "annotator", "expert"


BLIND_RUNS = {7}


@pytest.mark.parametrize("roles, run_id, allowed", [
    ({ENG}, 1, True),                 # an engineer reads a run nobody makes them grade blind
    ({ENG}, 7, False),                # ...but not one whose answer they label blind
    ({ENG, ANN}, 1, True),
    ({ENG, ANN}, 7, False),
    ({ENG, ADJ}, 7, False),
    ({ADJ}, 1, False),                # adjudicators settle items; runs are not theirs
    ({ADJ, ANN}, 1, False),
    ({ANN}, 1, False),
    ({EXP}, 1, False),
    (set(), 1, False),
])
def test_can_read_run(roles, run_id, allowed):
    assert policies.can_read_run(roles=roles, run_id=run_id, blind_run_ids=BLIND_RUNS) is allowed
    if allowed:
        policies.check_can_read_run(roles=roles, run_id=run_id, blind_run_ids=BLIND_RUNS)
    else:
        with pytest.raises(PermissionDenied):
            policies.check_can_read_run(roles=roles, run_id=run_id, blind_run_ids=BLIND_RUNS)


def test_check_can_read_run_says_which_run_and_queue_or_which_role():
    with pytest.raises(PermissionDenied) as blind:
        policies.check_can_read_run(roles={ENG}, run_id=7, blind_run_ids=BLIND_RUNS, run_name="nightly",
                                    queue_name="June")
    assert str(blind.value) == ("you are labelling answers of run 'nightly' blind in queue 'June'; its results are "
                                "hidden from you until those items are complete")
    with pytest.raises(PermissionDenied) as role:
        policies.check_can_read_run(roles={ADJ}, run_id=1, blind_run_ids=set())
    assert str(role.value) == "Reading runs, their answers and scores needs the engineer role."


@pytest.mark.parametrize("answer_id, run_id, shows_run, allowed", [
    (10, 1, False, True),     # not blind, run not blind
    (10, 1, True, True),
    (11, 7, False, True),     # another answer of a blind run, where the run is not shown: visible
    (11, 7, True, False),     # ...where the run is shown: hidden (absence, subtraction)
    (12, 7, False, False),    # the blind answer itself: hidden either way
    (12, 7, True, False),
])
def test_can_read_answer(answer_id, run_id, shows_run, allowed):
    facts = {"answer_id": answer_id, "run_id": run_id, "blind_answer_ids": {12}, "blind_run_ids": BLIND_RUNS,
             "shows_run": shows_run}
    assert policies.can_read_answer(**facts) is allowed
    if allowed:
        policies.check_can_read_answer(**facts)
    else:
        with pytest.raises(PermissionDenied):
            policies.check_can_read_answer(**facts)


@pytest.mark.parametrize("roles, allowed", [
    ({ANN}, True), ({ANN, ENG}, True), ({ANN, ADJ}, True),
    ({ENG}, False), ({ADJ}, False), ({EXP}, False), (set(), False),
])
def test_can_join_pool(roles, allowed):
    assert policies.can_join_pool(roles=roles) is allowed
    if allowed:
        policies.check_can_join_pool(roles=roles, username="u")
    else:
        with pytest.raises(ServiceError) as refused:
            policies.check_can_join_pool(roles=roles, username="u", field="annotators[0]")
        assert refused.value.problems[0].field == "annotators[0]" and "annotator role" in refused.value.message


NIGHTLY = (4, "support nightly", "labelling")


AUDIT = (9, "june audit", "audit")


@pytest.mark.parametrize(("roles", "allowed"), [
    ({"annotator"}, True),
    ({"annotator", "engineer"}, True),
    ({"engineer"}, False),
    ({"adjudicator"}, False),
    (set(), False),
])
def test_only_annotators_hold_labels(roles, allowed):
    assert policies.can_hold_label(roles=roles) is allowed
    if allowed:
        policies.check_can_hold_label(roles=roles, username="x")
    else:
        with pytest.raises(ServiceError, match="user 'x' does not hold the annotator role"):
            policies.check_can_hold_label(roles=roles, username="x")


@pytest.mark.parametrize(("queues", "source", "message"), [
    ([], None, None),
    ([], "import", None),
    ([], "app", None),
    ([], "queue", "the label by 'ann1' on r/q-1 was made in a labelling queue; it is changed there, not imported"),
    ([NIGHTLY], None, "answer r/q-1 is in labelling queue 'support nightly' (id 4); its labels are made there, "
                      "not imported"),
    ([NIGHTLY], "import", "answer r/q-1 is in labelling queue 'support nightly' (id 4)"),
    ([AUDIT, NIGHTLY], "queue", "answer r/q-1 is in labelling queue 'support nightly' (id 4) and audit queue "
                                "'june audit' (id 9); its labels"),
])
def test_an_import_never_writes_on_queued_answers_or_over_queue_labels(queues, source, message):
    assert policies.can_import_label(queues=queues, label_source=source) is (message is None)
    if message is None:
        policies.check_can_import_label(queues=queues, label_source=source, answer="r/q-1", annotator="ann1")
    else:
        with pytest.raises(ServiceError) as refused:
            policies.check_can_import_label(queues=queues, label_source=source, answer="r/q-1", annotator="ann1")
        assert refused.value.message.startswith(message)


@pytest.mark.parametrize(("replace", "reason", "allowed"), [
    (False, "", False),
    (False, "typo", False),
    (True, "", False),
    (True, "   ", False),
    (True, "typo", True),
])
def test_replacing_a_label_needs_replace_and_a_reason(replace, reason, allowed):
    assert policies.can_replace_label(replace=replace, reason=reason) is allowed
    facts = {"replace": replace, "reason": reason, "annotator": "ann1", "answer": "r/q-1", "old": "correct",
             "new": "incorrect", "rationale_only": False}
    if allowed:
        policies.check_can_replace_label(**facts)
    else:
        with pytest.raises(ServiceError, match="'ann1' labelled r/q-1 'correct' and this line says 'incorrect'; "
                                               "pass --replace with --reason"):
            policies.check_can_replace_label(**facts)
