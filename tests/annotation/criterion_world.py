"""A labelling queue that grades faithfulness (ordinal 1..5, tolerance 1) and tone (categorical) beside the
verdict, its items labelled by ann1 and ann2 as a plan says per qid: the world of the criterion disputes
on the adjudication list."""

from annotation.models import Queue
from annotation.services.claims import queue_next
from annotation.services.criteria import criterion_set
from annotation.services.labelling import label_submit
from annotation.services.queues import queue_create

FIVE = ["1", "2", "3", "4", "5"]
TONES = ["rude", "neutral", "kind"]


def labelled_queue(make_run, pool, plan: dict[str, tuple[tuple[str, str, str], tuple[str, str, str]]]) -> Queue:
    """A queue over a run of len(plan) questions; plan[qid] = ((verdict, faithfulness, tone) of ann1, the same of
    ann2). Every item ends with both labels (agreed or disputed by the queue's own rule)."""
    run_id = make_run(len(plan))
    criterion_set(dataset_name="support-q", name="faithfulness", kind="ordinal", values=FIVE, pass_rule=">=4")
    criterion_set(dataset_name="support-q", name="tone", kind="categorical", values=TONES)
    queue = queue_create(
        name="graded",
        annotators=["ann1", "ann2"],
        overlap=2,
        run_id=run_id,
        seed=7,
        created_by=pool["eng"],
        criteria=["faithfulness", "tone"],
        tolerance={"faithfulness": 1},
    )
    for _ in plan:
        claims = [queue_next(queue=queue, annotator=pool[name]) for name in ("ann1", "ann2")]
        assert claims[0] is not None and claims[1] is not None and claims[0].item.pk == claims[1].item.pk
        item = claims[0].item
        for name, (verdict, faithfulness, tone) in zip(("ann1", "ann2"), plan[item.answer.qid], strict=True):
            label_submit(
                queue=queue,
                item_id=item.pk,
                annotator=pool[name],
                verdict=verdict,
                values={"faithfulness": faithfulness, "tone": tone},
            )
    return queue
