"""The mypy ratchet's counting and comparison (mypy itself is not run here: make lint runs it)."""

import importlib.util
import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mypy_ratchet", ROOT / "tools" / "mypy_ratchet.py")
assert _spec is not None and _spec.loader is not None
ratchet = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ratchet)

OUTPUT = [
    "annotation/services/runs.py:12: error: Incompatible types in assignment  [assignment]",
    "annotation/services/runs.py:40:5: error: Item None has no attribute x  [union-attr]",
    "annotation/services/runs.py:41: note: See https://mypy.readthedocs.io",
    "annotation/models/__init__.py:3: error: Name y is not defined  [name-defined]",
    "bench/judge_bench.py:82: error: _Server has no attribute url  [attr-defined]",
    "manage.py:7: error: Function is missing a return type annotation  [no-untyped-def]",
]


def test_errors_are_counted_per_module_and_notes_are_not():
    counts, shown = ratchet.count_errors(OUTPUT)
    assert counts == Counter(
        {"annotation.services.runs": 2, "annotation.models": 1, "bench.judge_bench": 1, "manage": 1}
    )
    assert shown["annotation.services.runs"] == OUTPUT[:2]


def test_a_module_may_lose_errors_but_not_gain_them():
    baseline = {"a": 3, "b": 1, "gone": 2}
    grown, shrunk = ratchet.compare(Counter({"a": 3, "b": 2, "new": 1}), baseline)
    assert grown == {"b": (1, 2), "new": (0, 1)}
    assert shrunk == {"gone": (2, 0)}
    assert ratchet.compare(Counter({"a": 1}), {"a": 3}) == ({}, {"a": (3, 1)})


def test_a_strict_module_is_allowed_no_error_whatever_the_baseline_says():
    strict = ["evalapp", "evalapp.*", "annotation.policies"]
    grown, _ = ratchet.compare(
        Counter({"evalapp.api": 1, "annotation.policies": 1, "annotation.services": 2}),
        {"evalapp.api": 5, "annotation.policies": 1, "annotation.services": 2},
        strict,
    )
    assert grown == {"evalapp.api": (0, 1), "annotation.policies": (0, 1)}
    assert ratchet.is_strict("evalapp", strict)
    assert ratchet.is_strict("evalapp.settings.base", strict)
    assert not ratchet.is_strict("evalappx", strict)
    assert not ratchet.is_strict("annotation.policies_extra", strict)


def test_the_strict_patterns_are_read_from_the_projects_mypy_overrides():
    patterns = ratchet.strict_patterns()
    assert {"evalapp", "evalapp.*", "annotation.policies", "calibration.policies", "evalstats.*"} <= set(patterns)
    assert "environ.*" not in patterns


def test_the_baseline_round_trips_without_modules_at_zero(tmp_path):
    path = tmp_path / "baseline.json"
    ratchet.write_baseline(Counter({"b": 2, "a": 1, "clean": 0}), path)
    data = json.loads(path.read_text())
    assert data["total"] == 3
    assert list(data["modules"]) == ["a", "b"]
    assert ratchet.load_baseline(path) == {"a": 1, "b": 2}
    assert ratchet.load_baseline(tmp_path / "missing.json") == {}


def test_targets_are_the_folders_holding_python_and_the_top_level_scripts(tmp_path):
    for name in (
        "pkg/__init__.py",
        "pkg/sub/mod.py",
        "bench/x.py",
        ".venv/lib/y.py",
        "var/z.py",
        "thing.egg-info/a.py",
        "templates/t.py",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "static").mkdir()
    (tmp_path / "manage.py").write_text("")
    (tmp_path / "README.md").write_text("")
    assert ratchet.targets(tmp_path) == ["bench", "manage.py", "pkg"]
