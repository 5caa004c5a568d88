"""The comparison pages (HTML): system runs, compare, the planner, series and dataset history."""
