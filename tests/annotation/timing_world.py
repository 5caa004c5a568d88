"""Factory data for the time-per-label reports, shared by their selector, API, command and page tests.

Tagging, dataset `timeset`: ten questions, three with gold and one not answerable, so six untagged.
eve tagged five: 30 s (two saves, 10 + 20), 40, 50, 100 and one at 0 s (a script's save); kim three:
60, 90, 600; ola one at 0 s only (no timing); ann changed only a question's wording (not tagging work).

Labelling, a queue of six items with overlap 2 and pool ann1..ann4: ann1 labelled four (12, 18, 0, 30 s),
ann2 two (20, 40), ann4 one imported without a figure, ann3 none. Items 1-3 are complete, item 4 has one
label of two, items 5-6 none: five labels left.
"""

from typing import cast

from annotation.models import Dataset, Queue, QueueItem
from tests.factories import (
    AssignmentFactory,
    DatasetFactory,
    EditAuditFactory,
    HumanLabelFactory,
    QueueFactory,
    QueueItemFactory,
    QueueMemberFactory,
    UserFactory,
    record,
    version,
)

TAGGING_SECONDS = {
    "eve": [
        ("t-01", 1, 10.0),
        ("t-01", 2, 20.0),
        ("t-02", 1, 40.0),
        ("t-03", 1, 50.0),
        ("t-04", 1, 100.0),
        ("t-05", 1, 0.0),
    ],
    "kim": [("t-06", 1, 60.0), ("t-07", 1, 90.0), ("t-08", 1, 600.0)],
    "ola": [("t-09", 1, 0.0)],
}


def tagging_world() -> Dataset:
    dataset = cast("Dataset", DatasetFactory(name="timeset"))
    records = [record(f"t-{i:02d}") for i in range(1, 11)]
    for r in records[:3]:
        r.update(gold_doc_id="doc:a", gold_chunk_id="doc:a#0000", gold_text="A passage.")
    records[3]["stratum"] = "no_answer"
    version(dataset, records)
    for username, saves in TAGGING_SECONDS.items():
        user = UserFactory(username=username, roles=("expert",))
        for qid, revision, seconds in saves:
            # a save that touches two fields writes two audit rows with the same seconds: counted once
            for field in ("gold_chunk_id", "gold_text"):
                EditAuditFactory(
                    dataset=dataset, qid=qid, revision=revision, field=field, user=user, active_seconds=seconds
                )
    ann = UserFactory(username="ann", roles=("expert",))
    EditAuditFactory(dataset=dataset, qid="t-10", field="question", user=ann, active_seconds=300.0)
    return dataset


QUEUE_LABELS: dict[str, list[tuple[int, float | None]]] = {
    # annotator -> [(item index, active seconds)]
    "ann1": [(0, 12.0), (1, 18.0), (2, 0.0), (3, 30.0)],
    "ann2": [(0, 20.0), (1, 40.0)],
    "ann4": [(2, None)],
}


def queue_world() -> Queue:
    queue = cast("Queue", QueueFactory(name="timed round", overlap=2))
    users = {name: UserFactory(username=name, roles=("annotator",)) for name in ("ann1", "ann2", "ann3", "ann4")}
    for user in users.values():
        QueueMemberFactory(queue=queue, user=user)
    items = [cast("QueueItem", QueueItemFactory(queue=queue)) for _ in range(6)]
    done = [0] * 6
    for name, labels in QUEUE_LABELS.items():
        for index, seconds in labels:
            item = items[index]
            AssignmentFactory(item=item, annotator=users[name])
            HumanLabelFactory(
                answer=item.answer,
                annotator=users[name],
                verdict="correct" if name == "ann1" else "incorrect",
                rationale=f"SECRET-RATIONALE of {name}",
                source="queue" if seconds is not None else "import",
                active_seconds=seconds,
            )
            done[index] += 1
    for item, n in zip(items, done, strict=True):
        item.done = item.taken = n
        item.status = QueueItem.DISPUTED if n == 2 else QueueItem.OPEN
        item.save()
    return queue
