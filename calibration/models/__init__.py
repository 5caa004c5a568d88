"""Judges and their immutable versions, calibration samples and runs, measurements, grading runs."""

from calibration.models.judges import ImportedVerdict, Judge, JudgeVersion
from calibration.models.runs import (
    CalibrationRun,
    CalibrationSample,
    GradedAnswer,
    GradingRun,
    Measurement,
    RepeatVerdict,
    SampleItem,
    Verdict,
)

__all__ = [
    "CalibrationRun",
    "CalibrationSample",
    "GradedAnswer",
    "GradingRun",
    "ImportedVerdict",
    "Judge",
    "JudgeVersion",
    "Measurement",
    "RepeatVerdict",
    "SampleItem",
    "Verdict",
]
