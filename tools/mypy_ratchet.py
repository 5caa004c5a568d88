"""mypy's error count per module may only go down.

Runs mypy (the configuration in pyproject.toml) over every Python package and script of the project, counts
the errors of each module and compares the counts with tools/mypy_baseline.json: it fails when a module has
more errors than its baseline (a module missing from the baseline has none), and prints those errors. A
module that has fewer says so; `--update` writes the counts of this run as the new baseline (after a fix,
or after modules move).

    python tools/mypy_ratchet.py            # check (make lint)
    python tools/mypy_ratchet.py --update   # rewrite the baseline (make mypy-baseline)

The strict modules (pyproject's mypy overrides that set disallow_untyped_defs) are allowed no error at all,
whatever the baseline says, and --update never writes one for them: strict stays strict even for a package
not yet in mypy's `files`.
"""

import argparse
import json
import re
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tools" / "mypy_baseline.json"
# Top-level folders that hold no project code.
SKIP = {"var", "build", "static", "staticfiles", "templates", "node_modules", "htmlcov"}
_ERROR = re.compile(r"^(?P<path>[^:\n]+\.pyi?):(?P<line>\d+)(?::\d+)?: error: ")


def targets(root: Path = ROOT) -> list[str]:
    """Every top-level folder holding Python files, and the Python files at the top (manage.py)."""
    found = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith((".", "_")) or entry.name in SKIP or entry.name.endswith(".egg-info"):
            continue
        is_script = entry.is_file() and entry.suffix == ".py"
        if is_script or (entry.is_dir() and any(entry.rglob("*.py"))):
            found.append(entry.name)
    return found


def strict_patterns(root: Path = ROOT) -> list[str]:
    """The module patterns of pyproject's strict mypy overrides ("evalapp", "evalapp.*")."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns: list[str] = []
    for override in config.get("tool", {}).get("mypy", {}).get("overrides", []):
        if override.get("disallow_untyped_defs"):
            modules = override.get("module", [])
            patterns.extend([modules] if isinstance(modules, str) else modules)
    return patterns


def is_strict(module: str, patterns: list[str]) -> bool:
    """mypy's matching: "pkg.*" is pkg and everything under it, any other pattern the module itself."""
    for pattern in patterns:
        if pattern.endswith(".*"):
            if module == pattern[:-2] or module.startswith(pattern[:-1]):
                return True
        elif module == pattern:
            return True
    return False


def module_name(path: str) -> str:
    """The dotted name a reported path stands for: evalapp/api.py -> evalapp.api, a package's
    __init__.py -> the package, bench/judge_bench.py -> bench.judge_bench."""
    parts = list(Path(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def count_errors(lines: Iterable[str]) -> tuple[Counter[str], dict[str, list[str]]]:
    """Errors per module in mypy's output, and the error lines themselves (notes are not errors)."""
    counts: Counter[str] = Counter()
    shown: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        match = _ERROR.match(line)
        if match:
            module = module_name(match["path"])
            counts[module] += 1
            shown[module].append(line)
    return counts, shown


def compare(
    counts: Counter[str], baseline: dict[str, int], strict: list[str] | None = None
) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """(grown, shrunk): module -> (allowed count, count now) for the modules whose count changed; a strict
    module is allowed none."""
    grown, shrunk = {}, {}
    for module in sorted(set(counts) | set(baseline)):
        allowed = 0 if is_strict(module, strict or []) else baseline.get(module, 0)
        before, now = allowed, counts.get(module, 0)
        if now > before:
            grown[module] = (before, now)
        elif now < before:
            shrunk[module] = (before, now)
    return grown, shrunk


def run_mypy(paths: list[str]) -> list[str]:
    """mypy's output lines over `paths`; exits when mypy itself fails (exit status 2: a crash, a bad config)."""
    command = [
        sys.executable,
        "-m",
        "mypy",
        "--no-error-summary",
        "--no-pretty",
        "--no-color-output",
        "--show-error-codes",
        "--hide-error-context",
        *paths,
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode not in (0, 1):
        sys.stderr.write(result.stdout + result.stderr)
        sys.exit(f"mypy failed (exit {result.returncode}): {' '.join(command)}")
    return result.stdout.splitlines()


def load_baseline(path: Path = BASELINE) -> dict[str, int]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): int(v) for k, v in data["modules"].items()}


def write_baseline(counts: Counter[str], path: Path = BASELINE) -> None:
    modules = {module: counts[module] for module in sorted(counts) if counts[module]}
    data = {
        "about": "mypy errors per module, which may only go down: python tools/mypy_ratchet.py --update rewrites it",
        "total": sum(modules.values()),
        "modules": modules,
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="write this run's counts as the new baseline")
    args = parser.parse_args(argv)

    counts, shown = count_errors(run_mypy(targets()))
    total = sum(counts.values())
    strict = strict_patterns()
    if args.update:
        refused = {module: n for module, n in counts.items() if n and is_strict(module, strict)}
        write_baseline(Counter({m: n for m, n in counts.items() if m not in refused}))
        print(
            f"mypy baseline: {total - sum(refused.values())} errors in {len(counts) - len(refused)} modules "
            f"written to {BASELINE.relative_to(ROOT)}"
        )
        for module in sorted(refused):
            print(f"{module}: {refused[module]} mypy errors in a strict module, which the baseline never allows")
            for line in shown[module]:
                print(f"  {line}")
        return 1 if refused else 0

    baseline = load_baseline()
    grown, shrunk = compare(counts, baseline, strict)
    for module, (before, now) in grown.items():
        allows = "a strict module allows none" if is_strict(module, strict) else f"the baseline allows {before}"
        print(f"{module}: {now} mypy errors, {allows}")
        for line in shown[module]:
            print(f"  {line}")
    for module, (before, now) in shrunk.items():
        print(f"{module}: {now} mypy errors, down from {before}")
    if shrunk and not grown:
        print("fewer errors than the baseline: run `make mypy-baseline` to hold them there")
    if grown:
        print(
            f"mypy ratchet: {len(grown)} module(s) have more errors than tools/mypy_baseline.json allows "
            "(fix them; after a move, `make mypy-baseline`)"
        )
        return 1
    print(f"mypy ratchet: {total} errors in {len(counts)} modules, none above the baseline ({sum(baseline.values())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
