"""Corpus, labelled sets (with immutable content-hashed versions), system runs, human labels and the
figures published from runs."""

from annotation.models.corpus import Chunk, Document
from annotation.models.datasets import (
    Criterion,
    Dataset,
    DatasetVersion,
    EditAudit,
    Example,
    GoldCheckReport,
    VersionEntry,
    WorkingExample,
)
from annotation.models.imports import IMPORT_KINDS, IMPORT_STATUSES, ImportJob
from annotation.models.published import Correction, PublishedFigure
from annotation.models.queue_counts import QueueLabelSeconds, QueuePairCount
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
    REQUIRED_PINS,
    Adjudication,
    Answer,
    CriterionAdjudication,
    CriterionLabel,
    CriterionLabelEvent,
    HumanLabel,
    LabelEvent,
    Run,
    missing_pins,
)
from annotation.models.search import SearchPosting, SearchStats, SearchTerm
from annotation.models.traffic import RULE_KINDS, STRATUM_SOURCES, TrafficQuestion, TrafficRule

__all__ = [
    "IMPORT_KINDS",
    "IMPORT_STATUSES",
    "PINNED",
    "REQUIRED_PINS",
    "RULE_KINDS",
    "STRATUM_SOURCES",
    "Adjudication",
    "Answer",
    "Assignment",
    "Chunk",
    "Correction",
    "Criterion",
    "CriterionAdjudication",
    "CriterionLabel",
    "CriterionLabelEvent",
    "Dataset",
    "DatasetVersion",
    "Document",
    "EditAudit",
    "Example",
    "GoldCheckReport",
    "HumanLabel",
    "ImportJob",
    "LabelEvent",
    "PublishedFigure",
    "Queue",
    "QueueItem",
    "QueueLabelSeconds",
    "QueueMember",
    "QueuePairCount",
    "QueueRubric",
    "RelabelAudit",
    "RelabelAuditItem",
    "Run",
    "SearchPosting",
    "SearchStats",
    "SearchTerm",
    "TrafficQuestion",
    "TrafficRule",
    "VersionEntry",
    "WorkingExample",
    "missing_pins",
]
