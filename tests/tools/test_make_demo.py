"""The demo generator, which lives outside the installed package, rebuilds the committed demo files exactly."""

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = ("corpus.jsonl", "questions.jsonl", "run_baseline.jsonl", "run_candidate.jsonl", "labels.jsonl")


@pytest.mark.skipif(
    sys.version_info[:3] != (3, 11, 7), reason="the committed demo was built from CPython 3.11.7's docstrings"
)
def test_make_demo_rebuilds_the_committed_files_byte_for_byte(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "demo" / "make_demo.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "labels: 320 on 160 answers, 19 disagreements" in done.stdout
    for name in FILES:
        assert filecmp.cmp(tmp_path / name, ROOT / "annotation" / "demo" / name, shallow=False), name


def test_the_generator_is_not_in_the_installed_package():
    assert not list((ROOT / "annotation" / "demo").glob("*.py"))
