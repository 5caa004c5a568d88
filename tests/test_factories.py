"""The factories build what the services would: a factory version has the hash an import of its records gets."""

import factory
import pytest

from annotation.services.datasets import questions_import
from tests import factories
from tests.conftest import QUESTIONS, write_jsonl
from tests.factories import (
    AnswerFactory,
    DatasetFactory,
    HumanLabelFactory,
    QueueItemFactory,
    QueueMemberFactory,
    UserFactory,
    version,
)

pytestmark = pytest.mark.django_db


def test_a_factory_version_has_the_hash_an_import_gives(tmp_path):
    made = version(DatasetFactory(name="by-factory"), QUESTIONS)
    imported = questions_import(path=write_jsonl(tmp_path / "q.jsonl", QUESTIONS), dataset_name="by-import")
    assert made.dataset_hash == imported.dataset_hash
    assert made.examples == 3
    assert sorted(made.entries.values_list("qid", "stratum")) == [
        ("q-0001", "policy_lookup"),
        ("q-0002", "policy_lookup"),
        ("q-0003", "no_answer"),
    ]


def test_users_get_their_roles_and_a_token():
    user = UserFactory(username="eng", roles=("engineer", "annotator"))
    assert sorted(user.groups.values_list("name", flat=True)) == ["annotator", "engineer"]
    assert user.auth_token.key
    assert user.check_password("pw-xxxxxxxx")


def test_labels_and_queue_rows_hang_together():
    label = HumanLabelFactory(verdict="incorrect")
    assert label.annotator.groups.filter(name="annotator").exists()
    item = QueueItemFactory(answer=label.answer)
    member = QueueMemberFactory(queue=item.queue)
    assert item.queue.members.get() == member
    assert AnswerFactory().run.run_id != label.answer.run.run_id


FACTORIES = sorted(
    (
        obj
        for obj in vars(factories).values()
        if isinstance(obj, type)
        and issubclass(obj, factory.django.DjangoModelFactory)
        and obj is not factory.django.DjangoModelFactory
    ),
    key=lambda f: f.__name__,
)


def test_the_list_of_factories_is_not_empty_and_names_every_one():
    """The next test runs once per factory: this one fails if the list it runs over went missing."""
    assert [f.__name__ for f in FACTORIES] == [
        "AnswerFactory",
        "AssignmentFactory",
        "ChunkFactory",
        "DatasetFactory",
        "DocumentFactory",
        "EditAuditFactory",
        "HumanLabelFactory",
        "JudgeFactory",
        "JudgeVersionFactory",
        "QueueFactory",
        "QueueItemFactory",
        "QueueMemberFactory",
        "RelabelAuditFactory",
        "RelabelAuditItemFactory",
        "RunFactory",
        "UserFactory",
    ]


@pytest.mark.parametrize("model_factory", FACTORIES, ids=lambda f: f.__name__)
def test_every_factory_builds_a_valid_saved_object(model_factory):
    """A default object passes the model's own validation (fields, choices, unique constraints) and is
    stored exactly as built; two in a row do not collide."""
    first, second = model_factory(), model_factory()
    for made in (first, second):
        made.full_clean()
        stored = type(made).objects.get(pk=made.pk)
        fields = [f.attname for f in type(made)._meta.concrete_fields]
        assert {f: getattr(stored, f) for f in fields} == {f: getattr(made, f) for f in fields}
    assert first.pk != second.pk
