"""REST endpoints of the comparisons. Thin: parse the query string, call one selector, render. Engineers
only, and each selector applies the viewer's blind scope (annotation.policies.can_read_run)."""
