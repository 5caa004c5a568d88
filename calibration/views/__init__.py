"""The judge pages (HTML): judges, a judge version with its gate, and calibration runs."""
