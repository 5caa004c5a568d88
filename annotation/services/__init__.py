"""Writes. Every service is keyword-only, atomic, and raises ServiceError for input to fix."""
