"""Calibration and grading runs in flight, read from the database when /metrics is scraped."""

from collections.abc import Iterator

from django.db.models import Count

IN_FLIGHT = ("queued", "running")


def runs_in_flight() -> Iterator[tuple[str, str, list[tuple[dict[str, str], float]]]]:
    """Queued and running calibration runs and gradings, by status (two grouped statements)."""
    from calibration.models import CalibrationRun, GradingRun

    for name, model, documentation in (
        ("evalapp_calibration_runs_in_flight", CalibrationRun, "Calibration runs queued or running, by status"),
        ("evalapp_grading_runs_in_flight", GradingRun, "Grading runs queued or running, by status"),
    ):
        counts = dict(
            model.objects.filter(status__in=IN_FLIGHT).values_list("status").annotate(n=Count("id")).order_by()
        )
        yield name, documentation, [({"status": s}, float(counts.get(s, 0))) for s in IN_FLIGHT]
