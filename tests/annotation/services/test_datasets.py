"""Labelled sets: imports as content-hashed versions, exports, the strata budget, the working copy and publishing."""

import hashlib
import json

import pytest

from annotation.hashing import canonical_json
from annotation.models import (
    DatasetVersion,
    EditAudit,
    Example,
    VersionEntry,
    WorkingExample,
)
from annotation.services.datasets import dataset_publish, questions_import
from annotation.services.working import working_edit
from evalapp.errors import ServiceError
from tests.conftest import QUESTIONS, question, run_cmd, write_jsonl


def manual_dataset_hash(records):
    lines = sorted(
        (
            r["qid"],
            hashlib.sha256(
                json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
            ).hexdigest(),
        )
        for r in records
    )
    return "sha256:" + hashlib.sha256("\n".join(f"{q}\t{h}" for q, h in lines).encode()).hexdigest()


@pytest.mark.django_db
def test_import_questions_makes_a_version_with_the_interfaces_hash(questions_file):
    code, out, _ = run_cmd("import_questions", str(questions_file), "--dataset", "support", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["dataset_hash"] == manual_dataset_hash(QUESTIONS)
    assert {k: payload[k] for k in ("dataset", "examples", "added", "removed", "modified", "unchanged")} == {
        "dataset": "support",
        "examples": 3,
        "added": 3,
        "removed": 0,
        "modified": 0,
        "unchanged": 0,
    }


@pytest.mark.django_db
def test_second_import_counts_partitions_and_keeps_the_first_version(tmp_path, questions_file):
    first = questions_import(path=questions_file, dataset_name="support")
    relabelled = dict(QUESTIONS[0], expected="thirty days")
    second = write_jsonl(tmp_path / "v2.jsonl", [relabelled, QUESTIONS[1], question("q-0009")])
    result = questions_import(path=second, dataset_name="support")
    assert (result.added, result.removed, result.modified, result.unchanged, result.number) == (1, 1, 1, 1, 2)
    v1 = DatasetVersion.objects.get(number=1)
    assert v1.dataset_hash == first.dataset_hash and VersionEntry.objects.filter(version=v1).count() == 3
    # Identical records are stored once across versions.
    assert Example.objects.count() == 5


@pytest.mark.django_db
def test_export_round_trip_is_byte_stable_and_keeps_unknown_keys(tmp_path, questions_file):
    first = questions_import(path=questions_file, dataset_name="support")
    export1 = tmp_path / "export1.jsonl"
    assert run_cmd("export_questions", "--dataset", "support", "--output", str(export1))[0] == 0
    lines = export1.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["qid"] for line in lines] == ["q-0001", "q-0002", "q-0003"]
    assert json.loads(lines[2])["team"] == "billing" and json.loads(lines[2])["gold_text"] is None
    again = questions_import(path=export1, dataset_name="support")
    assert again.dataset_hash == first.dataset_hash and not again.created
    code, out, _ = run_cmd("export_questions", "--dataset", "support", "--version", first.dataset_hash[7:19])
    assert code == 0 and out == export1.read_text(encoding="utf-8")


@pytest.mark.django_db
def test_bad_questions_are_all_listed_and_nothing_is_written(tmp_path):
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            question("q-1"),
            question("q-1"),
            {"qid": "q-2", "question": "x"},
            question("q-3", grading="vibes"),
            "[1, 2]",
            "{oops",
        ],
    )
    code, _, err = run_cmd("import_questions", str(path), "--dataset", "support")
    assert code == 2
    for expected in [
        "line 2, field 'qid': duplicate qid 'q-1' (first on line 1)",
        "line 3, field 'stratum': missing required key",
        "line 4, field 'grading': unknown grading 'vibes'",
        "line 5: each line must be a JSON object",
        "line 6: malformed JSON",
    ]:
        assert expected in err
    assert DatasetVersion.objects.count() == 0 and Example.objects.count() == 0


@pytest.mark.django_db
def test_strata_budget_closes_to_100_and_polices_later_imports(tmp_path, questions_file):
    questions_import(path=questions_file, dataset_name="support")
    code, _, err = run_cmd("set_strata", "--dataset", "support", "policy_lookup=60", "no_answer=30")
    assert code == 2 and "sum to 90, not 100" in err
    code, out, _ = run_cmd("set_strata", "--dataset", "support", "policy_lookup=66.5", "no_answer=33.5", "--json")
    assert code == 0 and json.loads(out)["strata"] == {"policy_lookup": 66.5, "no_answer": 33.5}
    path = write_jsonl(tmp_path / "x.jsonl", [question("q-9", stratum="procedural")])
    code, _, err = run_cmd("import_questions", str(path), "--dataset", "support")
    assert code == 2 and "line 1, field 'stratum': stratum 'procedural' is outside the dataset's budget" in err
    code, _, err = run_cmd("set_strata", "--dataset", "support", "policy_lookup=abc", "no_answer=x=1")
    assert code == 2 and "share 'abc' is not a number" in err


@pytest.mark.django_db
def test_working_copy_edits_are_audited_conflict_checked_and_published(tmp_path, loaded, make_user):
    alice, bob = make_user("alice", "expert"), make_user("bob", "expert")
    result = working_edit(
        dataset_name="support",
        qid="q-0003",
        changes={"expected": "ask back"},
        base_revision=0,
        user=alice,
        active_seconds=12.5,
        client_key="k1",
    )
    assert result.revision == 1 and result.record["expected"] == "ask back"
    # The same save retried lands once.
    replay = working_edit(
        dataset_name="support",
        qid="q-0003",
        changes={"expected": "ask back"},
        base_revision=0,
        user=alice,
        active_seconds=12.5,
        client_key="k1",
    )
    assert replay.replayed and EditAudit.objects.count() == 1
    # Bob edited revision 0 too: a conflict, not an overwrite.
    with pytest.raises(ServiceError) as exc:
        working_edit(dataset_name="support", qid="q-0003", changes={"expected": "other"}, base_revision=0, user=bob)
    assert exc.value.status == 409 and "alice" in exc.value.message
    assert WorkingExample.objects.get(qid="q-0003").record["expected"] == "ask back"
    audit = EditAudit.objects.get()
    assert (audit.field, audit.old_value, audit.new_value, audit.user, audit.active_seconds) == (
        "expected",
        None,
        "ask back",
        alice,
        12.5,
    )
    # Import refuses while edits are pending.
    with pytest.raises(ServiceError, match="unpublished working-copy edit"):
        questions_import(path=write_jsonl(tmp_path / "q.jsonl", QUESTIONS), dataset_name="support")
    published = dataset_publish(dataset_name="support", user=alice)
    assert (published.number, published.modified, published.unchanged, published.created) == (2, 1, 2, True)
    assert dataset_publish(dataset_name="support").created is False
    v2 = DatasetVersion.objects.get(number=2)
    text = VersionEntry.objects.get(version=v2, qid="q-0003").example.canonical
    assert json.loads(text)["expected"] == "ask back" and text == canonical_json(json.loads(text))
    # After publishing, editing continues from the new version with the revision count kept.
    again = working_edit(dataset_name="support", qid="q-0003", changes={"expected": "x"}, base_revision=1, user=bob)
    assert again.revision == 2


@pytest.mark.django_db
def test_unmarking_ambiguous_restores_the_record_and_publishes_nothing(loaded, make_user):
    alice = make_user("alice", "expert")
    marked = working_edit(
        dataset_name="support", qid="q-0002", changes={"ambiguous": True}, base_revision=0, user=alice
    )
    assert marked.record["ambiguous"] is True
    for off in (False, None):
        unmarked = working_edit(
            dataset_name="support", qid="q-0002", changes={"ambiguous": off}, base_revision=marked.revision, user=alice
        )
        assert "ambiguous" not in unmarked.record
        marked = unmarked
    # The working copy equals the latest version again: publishing makes no new version.
    assert dataset_publish(dataset_name="support", user=alice).created is False


@pytest.mark.django_db
def test_invalid_working_edit_is_refused_and_writes_nothing(loaded, make_user):
    with pytest.raises(ServiceError) as exc:
        working_edit(
            dataset_name="support",
            qid="q-0001",
            changes={"grading": "vibes"},
            base_revision=0,
            user=make_user("a", "expert"),
        )
    assert "grading" in str(exc.value)
    assert WorkingExample.objects.count() == 0 and EditAudit.objects.count() == 0


@pytest.mark.django_db
def test_strata_budget_can_come_first_and_must_cover_the_strata_in_use(tmp_path, questions_file):
    assert run_cmd("set_strata", "--dataset", "fresh", "policy_lookup=90", "no_answer=10")[0] == 0
    assert questions_import(path=questions_file, dataset_name="fresh").examples == 3
    code, _, err = run_cmd("set_strata", "--dataset", "fresh", "policy_lookup=100")
    assert code == 2 and "field 'no_answer': 1 question(s) in this stratum" in err
    from annotation.models import Dataset

    assert Dataset.objects.get(name="fresh").strata_budget == {"policy_lookup": 90.0, "no_answer": 10.0}


@pytest.mark.django_db
def test_manifest_lines_carry_the_stratum_through_import_and_publish(loaded, make_user):
    assert dict(VersionEntry.objects.values_list("qid", "stratum")) == {
        "q-0001": "policy_lookup",
        "q-0002": "policy_lookup",
        "q-0003": "no_answer",
    }
    working_edit(
        dataset_name="support",
        qid="q-0002",
        changes={"stratum": "numeric"},
        base_revision=0,
        user=make_user("e", "expert"),
    )
    dataset_publish(dataset_name="support")
    v2 = DatasetVersion.objects.get(number=2)
    assert dict(VersionEntry.objects.filter(version=v2).values_list("qid", "stratum")) == {
        "q-0001": "policy_lookup",
        "q-0002": "numeric",
        "q-0003": "no_answer",
    }


@pytest.mark.django_db
def test_manifest_lines_carry_the_grading_rule_through_import_and_publish(loaded, make_user):
    """Each line keeps its record's rule ("" for a record naming none), so grading the answers a human
    label scores reads no record; a publish keeps the rules of the lines it carries over."""
    assert dict(VersionEntry.objects.values_list("qid", "grading")) == {
        "q-0001": "rubric",
        "q-0002": "extraction",
        "q-0003": "",
    }
    working_edit(
        dataset_name="support",
        qid="q-0002",
        changes={"grading": "span"},
        base_revision=0,
        user=make_user("e", "expert"),
    )
    dataset_publish(dataset_name="support")
    v2 = DatasetVersion.objects.get(number=2)
    assert dict(VersionEntry.objects.filter(version=v2).values_list("qid", "grading")) == {
        "q-0001": "rubric",
        "q-0002": "span",
        "q-0003": "",
    }
