"""Reads of the annotation app, a module per sub-domain. Every read a role can reach goes through one of
these, with the viewer's blind scope where it touches answers (annotation.selectors.blind)."""
