"""Truth tables of the rules on which labels an import may write (annotation.policies): pure, no database."""
import pytest

from annotation import policies
from evalapp.errors import ServiceError

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
