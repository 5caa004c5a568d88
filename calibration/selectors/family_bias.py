"""Same-family bias: is a judge more lenient on answers written by a model of its own family?"""

from __future__ import annotations

from annotation.selectors.blind import OPERATOR, BlindScope
from calibration.models import JudgeVersion, Measurement, Verdict
from calibration.selectors.blind_samples import sample_is_blind
from evalstats.proportions import newcombe_diff_ci

# A judge version's family when its params give no `model_family`: the first prefix its model name (after
# any "org/" part, lower-cased) starts with.
FAMILY_PREFIXES = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("llama", "meta"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("qwen", "qwen"),
    ("deepseek", "deepseek"),
)


def judge_family(version: JudgeVersion) -> str | None:
    """The version's model family: params `model_family`, else the FAMILY_PREFIXES rule on its model name."""
    given = (version.params or {}).get("model_family")
    if isinstance(given, str) and given.strip():
        return given.strip().lower()
    name = (version.model or "").rsplit("/", 1)[-1].lower()
    return next((family for prefix, family in FAMILY_PREFIXES if name.startswith(prefix)), None)


def family_bias(version: JudgeVersion, measurement: Measurement | None, *, scope: BlindScope = OPERATOR) -> dict | None:
    """{same_family_n, other_n, lenience_same, lenience_other, diff_points, ci95, warning} over the measured
    run's human-incorrect answers (final human verdict stored at measurement): lenience is the share the judge
    passed, among answers whose run record's `model_family` is the judge's and among those whose is another.
    `warning` is true when the judge is more lenient on its own family and the interval (Newcombe, in points)
    excludes 0. None when unmeasured, the judge's family is unknown, no answer falls on one side, or the sample
    holds an answer the viewer labels blind."""
    family = judge_family(version)
    if measurement is None or family is None or sample_is_blind(measurement, scope):
        return None
    same = [0, 0]  # [passed, n]
    other = [0, 0]
    for verdict, record in Verdict.objects.filter(run_id=measurement.run_id, human_verdict="incorrect").values_list(
        "verdict", "item__answer__run__record"
    ):
        written = (record or {}).get("model_family")
        if not isinstance(written, str) or not written.strip():
            continue
        side = same if written.strip().lower() == family else other
        side[0] += verdict == "correct"
        side[1] += 1
    if not same[1] or not other[1]:
        return None
    lenience_same, lenience_other = same[0] / same[1], other[0] / other[1]
    lo, hi = newcombe_diff_ci(same[0], same[1], other[0], other[1])
    return {
        "family": family,
        "same_family_n": same[1],
        "other_n": other[1],
        "lenience_same": lenience_same,
        "lenience_other": lenience_other,
        "diff_points": 100 * (same[0] * other[1] - other[0] * same[1]) / (same[1] * other[1]),
        "ci95": [100 * lo, 100 * hi],
        "warning": lenience_same > lenience_other and lo > 0,
    }
