"""Published figures and their corrections are records: listed in the admin, never edited or deleted there
(a figure keeps what was shown; a correction is added beside it with `correct_figure`)."""

from django.contrib import admin

from calibration.admin import ReadOnly
from comparisons.models import Correction, PublishedFigure


@admin.register(PublishedFigure)
class PublishedFigureAdmin(ReadOnly):
    list_display = ("run", "score", "n", "shown_to", "shown_at", "dataset_hash")
    search_fields = ("run__run_id", "shown_to")
    blind_run_field = "run_id"  # a figure is a run's score: hidden from staff who label that run blind


@admin.register(Correction)
class CorrectionAdmin(ReadOnly):
    list_display = ("figure", "shown_score", "comparable_score", "comparable_n", "created_at")
    blind_run_field = "figure__run_id"
