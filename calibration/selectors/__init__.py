"""Reads of the calibration app, a module per sub-domain."""
