"""Judges, judge versions, calibration runs and gates (issue 4) and comparisons (issue 7) live here."""
