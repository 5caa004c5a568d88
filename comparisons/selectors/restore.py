"""The restore drill: for every system run, whether what it pinned still resolves inside evalapp, so a
score can be rebuilt from this database alone.

Inside evalapp a run's pins resolve to rows: its dataset hash to a dataset version whose manifest still
hashes to it and whose records' stored texts still hash to their sha256, each grading's judge version to
a configuration that still hashes to the version's config hash, and a corpus state it names to a state of
the chunk history. The model snapshot, prompt hash,
evaluator, harness commit and retrieval index name things kept outside evalapp: listed, not judged.
"""

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from annotation.hashing import dataset_hash
from annotation.models import PINNED, DatasetVersion, Run, VersionEntry
from annotation.selectors.stale_history import corpus_states
from calibration.models import GradingRun
from calibration.services.judges import config_hash

# Pinned fields that name something kept outside evalapp: the drill cannot resolve them here.
EXTERNAL = PINNED


@dataclass(frozen=True)
class ManifestCheck:
    """A version's manifest as it hashes now, and the qids whose stored record text no longer hashes to the
    sha256 the manifest names (the record was edited under its content hash)."""

    dataset_hash: str
    altered: tuple[str, ...]


def _manifest_checks(version_ids: set[int]) -> dict[int, ManifestCheck]:
    """version id -> its ManifestCheck: one streamed statement per version (a manifest is read whole), every
    record's stored canonical text hashed again."""
    out = {}
    for pk in sorted(version_ids):
        manifest, altered = [], []
        rows = VersionEntry.objects.filter(version_id=pk).values_list("qid", "example_id", "example__canonical")
        for qid, sha, canonical in rows.iterator(chunk_size=5000):
            manifest.append((qid, sha))
            if hashlib.sha256(canonical.encode("utf-8")).hexdigest() != sha:
                altered.append(qid)
        out[pk] = ManifestCheck(dataset_hash(manifest), tuple(sorted(altered)))
    return out


def _altered_why(version: DatasetVersion, altered: tuple[str, ...]) -> str:
    shown = ", ".join(altered[:5]) + (f" and {len(altered) - 5} more" if len(altered) > 5 else "")
    records = "record no longer hashes to its sha256" if len(altered) == 1 else "records no longer hash to their sha256"
    return f"{version.dataset.name} v{version.number}: {len(altered)} stored {records} ({shown})"


def restore_drill() -> dict:
    """{"runs": [{"run", "ok", "problems": [{"field", "value", "why"}], "resolved", "external"}], "checked",
    "failing"}: every run, sorted by run id, with each pinned reference that no longer resolves.

    A dataset hash resolves when a version of the run's dataset (any dataset's when the run names none)
    carries it, that version's manifest still hashes to it and every record's stored text still hashes to
    the sha256 the manifest names; the run's own version link must carry the
    hash the run pinned. A grading's judge version resolves when it still carries the config hash the
    grading was made with and its configuration still hashes to it. A `corpus_state` in the run record must be a state of the chunk history."""
    runs = list(Run.objects.order_by("run_id").select_related("dataset_version__dataset", "dataset"))
    versions = list(DatasetVersion.objects.select_related("dataset"))
    by_hash: dict[str, list[DatasetVersion]] = defaultdict(list)
    for v in versions:
        by_hash[v.dataset_hash].append(v)
    wanted = {v.pk for r in runs for v in by_hash.get(r.dataset_hash, [])}
    wanted |= {r.dataset_version_id for r in runs if r.dataset_version_id}
    checks = _manifest_checks(wanted)
    gradings: dict[int, list[GradingRun]] = defaultdict(list)
    for g in GradingRun.objects.select_related("judge_version__judge").order_by("pk"):
        gradings[g.run_id].append(g)
    states = {s.name for s in corpus_states()} if any("corpus_state" in (r.record or {}) for r in runs) else set()

    out = []
    for run in runs:
        problems, resolved = [], []
        if run.dataset_hash:
            candidates = [
                v for v in by_hash.get(run.dataset_hash, []) if run.dataset_id is None or v.dataset_id == run.dataset_id
            ]
            if not candidates:
                problems.append(
                    {"field": "dataset_hash", "value": run.dataset_hash, "why": "no dataset version has this hash"}
                )
            elif not (same := [v for v in candidates if checks[v.pk].dataset_hash == run.dataset_hash]):
                v = candidates[0]
                problems.append(
                    {
                        "field": "dataset_hash",
                        "value": run.dataset_hash,
                        "why": f"{v.dataset.name} v{v.number}'s manifest now hashes to {checks[v.pk].dataset_hash}",
                    }
                )
            elif all(checks[v.pk].altered for v in same):
                v = same[0]
                problems.append(
                    {"field": "dataset_hash", "value": run.dataset_hash, "why": _altered_why(v, checks[v.pk].altered)}
                )
            else:
                resolved.append("dataset_hash")
        pinned = run.dataset_version
        if pinned is not None:
            if run.dataset_hash and pinned.dataset_hash != run.dataset_hash:
                problems.append(
                    {
                        "field": "dataset_version",
                        "value": f"{pinned.dataset.name} v{pinned.number}",
                        "why": f"the version's hash is {pinned.dataset_hash}, the run pinned {run.dataset_hash}",
                    }
                )
            else:
                resolved.append("dataset_version")
        for g in gradings.get(run.pk, []):
            jv = g.judge_version
            now = config_hash(
                backend=jv.backend,
                model=jv.model,
                prompt_template=jv.prompt_template,
                params=jv.params,
                rubric=jv.rubric,
                criteria=jv.criteria,
            )
            name = f"{jv.judge.name} v{jv.number}"
            # The gate a grading was allowed by names the config hash it was made with.
            recorded = (g.gate or {}).get("config_hash") or jv.config_hash
            if recorded != jv.config_hash:
                why = f"grading {g.pk} was made with this config hash; the judge version now carries {jv.config_hash}"
            elif now != jv.config_hash:
                why = f"grading {g.pk}: the judge version's configuration now hashes to {now}"
            else:
                resolved.append(f"judge_version {name}")
                continue
            problems.append({"field": "judge_version", "value": f"{name} {recorded}", "why": why})
        state = (run.record or {}).get("corpus_state")
        if state is not None:
            if not isinstance(state, str) or state not in states:
                problems.append(
                    {
                        "field": "corpus_state",
                        "value": str(state),
                        "why": "no corpus state of this name in the chunk history",
                    }
                )
            else:
                resolved.append("corpus_state")
        out.append(
            {
                "run": run.run_id,
                "ok": not problems,
                "problems": problems,
                "resolved": resolved,
                "external": [f for f in EXTERNAL if getattr(run, f)],
            }
        )
    return {"runs": out, "checked": len(out), "failing": sum(not r["ok"] for r in out)}
