"""evalstats is pure: importing every module pulls in no Django."""

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import evalstats

STATS_DIR = Path(evalstats.__file__).parent
REPO = STATS_DIR.parent


def test_importing_every_stats_module_loads_no_django():
    modules = sorted(m.name for m in pkgutil.iter_modules([str(STATS_DIR)]))
    assert "agreement" in modules and "paired" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module('evalstats.' + name)\n"
        "import evalstats\n"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "assert not loaded, loaded\n"
    )
    # A fresh interpreter, without DJANGO_SETTINGS_MODULE, so nothing else has imported Django.
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_no_stats_source_mentions_a_django_import():
    pattern = re.compile(
        r"^\s*(import|from)\s+(django|rest_framework|evalapp|annotation|calibration|comparisons)",
        re.M,
    )
    offenders = [
        p.name for p in STATS_DIR.rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
