"""The start-up check that every import-job kind has both halves registered (annotation.checks)."""

from django.core.checks import Error
from django.core.management import call_command

from annotation.api import imports as api_imports
from annotation.checks import import_kinds_check
from annotation.services import import_jobs


def test_the_installed_apps_register_both_halves_of_every_kind():
    assert import_kinds_check() == []
    assert set(import_jobs.IMPORTERS) == {"corpus", "questions", "run", "labels", "traffic", "verdicts"}
    call_command("check", "--fail-level", "ERROR")


def test_a_kind_with_only_its_importer_or_only_its_serializer_is_an_error(monkeypatch):
    monkeypatch.setitem(import_jobs.IMPORTERS, "orphan", lambda path, options, user: ({}, 201))
    monkeypatch.delitem(api_imports.RESULT_SERIALIZERS, "verdicts")
    monkeypatch.delitem(import_jobs.IMPORTERS, "traffic")

    errors = import_kinds_check()

    assert [(e.id, e.msg) for e in errors] == [
        ("annotation.E003", "import-job kind 'orphan' is registered in IMPORTERS but not in RESULT_SERIALIZERS."),
        ("annotation.E003", "import-job kind 'verdicts' is registered in IMPORTERS but not in RESULT_SERIALIZERS."),
        ("annotation.E003", "import-job kind 'traffic' is registered in RESULT_SERIALIZERS but not in IMPORTERS."),
    ]
    assert all(isinstance(e, Error) for e in errors)
    assert (
        errors[1].hint
        == "call register_result_serializer('verdicts', ...) in the AppConfig.ready that registers its other half."
    )
