"""Factories for unit tests of selectors, policies and services: rows made directly, no import files.

Records and versions are content-addressed exactly as the import makes them (annotation.hashing), so a
version built here has the hash an import of the same records would have.
"""

import json
from datetime import UTC, datetime

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token

from annotation import models as m
from annotation.hashing import canonical_json, dataset_hash, example_sha256
from calibration import models as cm

WHEN = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


class UserFactory(factory.django.DjangoModelFactory):
    """A user; `roles=("annotator", …)` puts them in those role groups and gives them an API token."""

    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-" + "x" * 8)

    @factory.post_generation
    def roles(self, create, extracted, **kwargs):
        if not create:
            return
        for role in extracted or ():
            self.groups.add(Group.objects.get_or_create(name=role)[0])
        Token.objects.get_or_create(user=self)


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Document

    doc_id = factory.Sequence(lambda n: f"doc:{n}")
    title = factory.LazyAttribute(lambda o: f"Document {o.doc_id}")
    source = "confluence"
    text = "Some text."
    text_sha256 = factory.LazyAttribute(lambda o: example_sha256({"text": o.text}))


class ChunkFactory(factory.django.DjangoModelFactory):
    """A live chunk (not searchable unless added to the search index: annotation.search.index_add)."""

    class Meta:
        model = m.Chunk

    document = factory.SubFactory(DocumentFactory)
    ordinal = factory.Sequence(lambda n: n)
    chunk_id = factory.LazyAttribute(lambda o: f"{o.document.doc_id}#{o.ordinal:04d}")
    text = factory.Sequence(lambda n: f"Passage number {n}.")


class DatasetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Dataset
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"set-{n}")


def record(qid: str, **fields) -> dict:
    """A question record with the required keys (stratum `policy_lookup` unless given)."""
    return {"qid": qid, "question": f"question {qid}", "stratum": "policy_lookup", **fields}


def version(
    dataset: m.Dataset, records: list[dict], *, parent: m.DatasetVersion | None = None, user=None
) -> m.DatasetVersion:
    """The dataset's next version holding exactly these records, hashed as an import would hash them."""
    shas = {r["qid"]: example_sha256(r) for r in records}
    number = (dataset.versions.order_by("-number").values_list("number", flat=True).first() or 0) + 1
    made = m.DatasetVersion.objects.create(
        dataset=dataset,
        number=number,
        dataset_hash=dataset_hash(shas.items()),
        parent=parent,
        source="import",
        examples=len(records),
        added=len(records),
        removed=0,
        modified=0,
        unchanged=0,
        created_by=user,
    )
    for r in records:
        example, _ = m.Example.objects.get_or_create(
            sha256=shas[r["qid"]], defaults={"qid": r["qid"], "stratum": r["stratum"], "canonical": canonical_json(r)}
        )
        m.VersionEntry.objects.create(version=made, qid=r["qid"], example=example, stratum=r["stratum"])
    return made


class RunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Run

    run_id = factory.Sequence(lambda n: f"run-{n}")
    system = factory.Sequence(lambda n: f"system-{n}")
    started_at = WHEN
    record = factory.LazyAttribute(lambda o: {"run_id": o.run_id, "system": o.system})


class AnswerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Answer

    run = factory.SubFactory(RunFactory)
    qid = factory.Sequence(lambda n: f"q-{n:04d}")
    answer = factory.LazyAttribute(lambda o: f"the answer to {o.qid}")
    correct = True


class HumanLabelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.HumanLabel

    answer = factory.SubFactory(AnswerFactory)
    annotator = factory.SubFactory(UserFactory, roles=("annotator",))
    verdict = "correct"
    source = "import"
    labelled_at = WHEN


class QueueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Queue

    name = factory.Sequence(lambda n: f"queue {n}")
    overlap = 2


class QueueMemberFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.QueueMember

    queue = factory.SubFactory(QueueFactory)
    user = factory.SubFactory(UserFactory, roles=("annotator",))


class QueueItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.QueueItem

    queue = factory.SubFactory(QueueFactory)
    answer = factory.SubFactory(AnswerFactory)
    position = factory.Sequence(lambda n: n)
    stratum = "policy_lookup"


class AssignmentFactory(factory.django.DjangoModelFactory):
    """A submitted label slot of an item (state done); `state=m.Assignment.CLAIMED` for a live claim."""

    class Meta:
        model = m.Assignment

    item = factory.SubFactory(QueueItemFactory)
    queue = factory.SelfAttribute("item.queue")
    annotator = factory.SubFactory(UserFactory, roles=("annotator",))
    state = m.Assignment.DONE
    claimed_at = WHEN
    lease_expires_at = WHEN
    submitted_at = WHEN


class EditAuditFactory(factory.django.DjangoModelFactory):
    """One field of one working-copy save, with the save's active seconds."""

    class Meta:
        model = m.EditAudit

    dataset = factory.SubFactory(DatasetFactory)
    qid = factory.Sequence(lambda n: f"q-{n:04d}")
    field = "gold_chunk_id"
    old_value = "doc:0#0001"  # a re-tag (a null old value would fail the model's own validation)
    new_value = "doc:0#0000"
    revision = 1
    user = factory.SubFactory(UserFactory, roles=("expert",))
    active_seconds = 0.0


class RelabelAuditFactory(factory.django.DjangoModelFactory):
    """A relabel audit over its own audit queue (pending; `status=m.RelabelAudit.DRIFT` for a flagged one)."""

    class Meta:
        model = m.RelabelAudit

    name = factory.Sequence(lambda n: f"audit {n}")
    source = "labels"
    criteria = factory.LazyFunction(lambda: {"annotator": "ann1"})
    batch_size = 10
    sample_size = 5
    queue = factory.SubFactory(QueueFactory, kind=m.Queue.KIND_AUDIT, overlap=1)


class RelabelAuditItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.RelabelAuditItem

    audit = factory.SubFactory(RelabelAuditFactory)
    answer = factory.SubFactory(AnswerFactory)
    original_verdict = "correct"


class JudgeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = cm.Judge
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"judge-{n}")


class JudgeVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = cm.JudgeVersion

    judge = factory.SubFactory(JudgeFactory)
    number = factory.Sequence(lambda n: n + 1)
    backend = "span"
    config_hash = factory.LazyAttribute(
        lambda o: "sha256:" + example_sha256({"judge": o.judge.name, "number": o.number, "backend": o.backend})
    )


def records_json(records: list[dict]) -> str:
    """Records as JSON Lines text, for the few tests that still go through an import."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
