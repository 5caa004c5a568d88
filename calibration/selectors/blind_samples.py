"""Whether a measured calibration sample holds an answer the viewer labels blind: the one test every
gate figure, evidence reading and page of a measurement applies before it shows a number."""

from __future__ import annotations

from annotation.selectors.blind import BlindScope
from calibration.models import Measurement, SampleItem


def sample_is_blind(measurement: Measurement | None, scope: BlindScope) -> bool:
    """True when the measured sample holds an answer in the viewer's blind scope. Then its confusion
    table, kappa and per-stratum counts are withheld from them: with the disagreement list (which
    leaves those answers out) they would give the hidden answers' human and judge verdicts away by
    subtraction, and outright when the table has one filled cell."""
    if measurement is None or not scope.blind:
        return False
    return SampleItem.objects.filter(
        sample_id=measurement.run.sample_id, answer_id__in=scope.answer_ids_query()
    ).exists()
