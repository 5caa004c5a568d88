"""Pure statistics for evalapp: agreement, kappa, bootstrap, paired comparison, manifests.

numpy / scipy only (scikit-learn and statsmodels are the references in tests/stats, not
dependencies); never Django. Functions take plain arrays and return frozen dataclasses.
"""

from evalstats.agreement import Agreement, agreement, agreement_from_counts, dropped_labels_warnings
from evalstats.band import Band, DifferenceVerdict, difference_verdict, run_band
from evalstats.bootstrap import (
    BootstrapCI,
    StratifiedBootstrapCI,
    bootstrap_kappa_ci,
    stratified_bootstrap_kappa_ci,
)
from evalstats.counts import agreement_from_cells, agreement_report_from_counts
from evalstats.drift import Drift, relabel_drift
from evalstats.gate import GateDecision, gate_decide
from evalstats.kappa import confusion_matrix
from evalstats.manifest import (
    Decomposition,
    ManifestDiff,
    ceiling_after_adding,
    decompose_movement,
    decompose_sums,
    diff_manifests,
)
from evalstats.multirater import (
    MultiRaterAgreement,
    bootstrap_alpha_ci,
    fleiss_kappa,
    krippendorff_alpha,
    multi_rater_agreement,
)
from evalstats.paired import (
    PairedComparison,
    n_for_gap,
    paired_bootstrap_ci,
    paired_counts,
    paired_diff,
    resolvable_gap,
)
from evalstats.qids import QidIndex
from evalstats.report import (
    LineError,
    agreement_report,
    agreement_report_from_rows,
    agreement_rows,
    parse_agreement_lines,
)
from evalstats.strata import StratumAgreement, per_stratum, strata_tables

__all__ = [
    "Agreement",
    "Band",
    "BootstrapCI",
    "Decomposition",
    "DifferenceVerdict",
    "Drift",
    "GateDecision",
    "LineError",
    "ManifestDiff",
    "MultiRaterAgreement",
    "PairedComparison",
    "QidIndex",
    "StratifiedBootstrapCI",
    "StratumAgreement",
    "agreement",
    "agreement_from_cells",
    "agreement_from_counts",
    "agreement_report",
    "agreement_report_from_counts",
    "agreement_report_from_rows",
    "agreement_rows",
    "bootstrap_alpha_ci",
    "bootstrap_kappa_ci",
    "ceiling_after_adding",
    "confusion_matrix",
    "decompose_movement",
    "decompose_sums",
    "diff_manifests",
    "difference_verdict",
    "dropped_labels_warnings",
    "fleiss_kappa",
    "gate_decide",
    "krippendorff_alpha",
    "multi_rater_agreement",
    "n_for_gap",
    "paired_bootstrap_ci",
    "paired_counts",
    "paired_diff",
    "parse_agreement_lines",
    "per_stratum",
    "relabel_drift",
    "resolvable_gap",
    "run_band",
    "strata_tables",
    "stratified_bootstrap_kappa_ci",
]
