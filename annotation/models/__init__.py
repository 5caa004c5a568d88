"""Corpus, labelled sets (with immutable content-hashed versions), system runs and human labels."""
from annotation.models.corpus import Chunk, Document
from annotation.models.datasets import (
    Dataset,
    DatasetVersion,
    EditAudit,
    Example,
    GoldCheckReport,
    VersionEntry,
    WorkingExample,
)
from annotation.models.queues import (
    Assignment,
    Queue,
    QueueItem,
    QueueMember,
    QueueRubric,
    RelabelAudit,
    RelabelAuditItem,
)
from annotation.models.runs import (
    PINNED,
    Adjudication,
    Answer,
    HumanLabel,
    LabelEvent,
    Run,
)

__all__ = [
    "PINNED",
    "Adjudication", "Answer", "Chunk", "Dataset", "DatasetVersion", "Document", "EditAudit",
    "Example", "GoldCheckReport", "HumanLabel", "LabelEvent", "Run", "VersionEntry", "WorkingExample",
    "Assignment", "Queue", "QueueItem", "QueueMember", "QueueRubric", "RelabelAudit", "RelabelAuditItem",
]
