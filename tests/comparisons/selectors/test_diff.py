"""Dataset diffs: the four partitions, and a run that does not cover the version."""
import json

import pytest

from annotation.services.datasets import questions_import
from tests.comparisons.support import (
    import_questions,
    import_run,
    q,
    run_command,
)
from tests.conftest import QUESTIONS, question, run_cmd, write_jsonl

pytestmark = pytest.mark.django_db


def test_diff_datasets_with_a_run_that_does_not_cover_the_version_exits_2(tmp_path):
    v1 = import_questions(tmp_path, "support", [q("q-0000"), q("q-0001")], "v1")
    v2 = import_questions(tmp_path, "support", [q("q-0000"), q("q-0001"), q("q-0002")], "v2")
    import_run(tmp_path, run_id="old", system="s", dataset="support", dataset_hash=v1["dataset_hash"],
               correct={"q-0000": True, "q-0001": False})
    import_run(tmp_path, run_id="new", system="s", dataset="support", dataset_hash=v2["dataset_hash"],
               correct={"q-0000": True, "q-0001": None, "q-0002": True})   # q-0001 not scored yet
    out = run_command("diff_datasets", "--dataset", "support", v1["dataset_hash"], v2["dataset_hash"],
                      "--run-old", "old", "--run-new", "new", expect=2)
    assert out["error"] == ("cannot decompose the movement: run new must score exactly the qids of version 2: "
                            "unscored ['q-0001'], not in the version []")


@pytest.mark.django_db
def test_diff_datasets_lists_the_four_partitions(tmp_path, questions_file):
    v1 = questions_import(path=questions_file, dataset_name="support")
    v2 = questions_import(path=write_jsonl(tmp_path / "v2.jsonl",
                                           [dict(QUESTIONS[0], expected="x"), QUESTIONS[1], question("q-0010")]),
                          dataset_name="support")
    code, out, _ = run_cmd("diff_datasets", "--dataset", "support", v1.dataset_hash, v2.dataset_hash, "--json")
    assert code == 0
    payload = json.loads(out)
    assert {k: payload[k] for k in ("added", "removed", "modified", "unchanged")} == {
        "added": ["q-0010"], "removed": ["q-0003"], "modified": ["q-0001"], "unchanged": ["q-0002"]}
    code, _, err = run_cmd("diff_datasets", "--dataset", "support", v1.dataset_hash, "sha256:deadbeef")
    assert code == 2 and "unknown version" in err
