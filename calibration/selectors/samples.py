"""What calibration samples leave out: a dataset's disputed answers (labels disagree, no adjudication),
which carry no final label and so are never drawn until an adjudicator settles them."""

from __future__ import annotations

from annotation.models import Answer, Dataset
from annotation.selectors.blind import OPERATOR, BlindScope
from annotation.selectors.disputes import disputed_answers, left_out


def sample_left_out(dataset: Dataset, *, scope: BlindScope = OPERATOR) -> dict:
    """The `disputed_left_out` object of a calibration on `dataset`: how many of its runs' answers are
    left out as disputed, named `RUN_ID/QID`. Those the viewer grades blind (their `scope`, which hides
    which run wrote an answer) are counted but not named (`blind_excluded`)."""
    disputes = disputed_answers(answers=Answer.objects.filter(run__dataset=dataset))
    named = [f"{d.run_id}/{d.qid}" for d in disputes if scope.can_read_answer(d.answer_id, d.run_pk, shows_run=True)]
    out = left_out(named)
    hidden = len(disputes) - len(named)
    if hidden:
        out["words"] += f" (and {hidden} you label blind, not named)"
    return {**out, "n": len(disputes), "blind_excluded": hidden}
