"""Forms the annotation pages parse their input with (bounds as the services and the API state them)."""

from django import forms

from annotation.services.queues import DEFAULT_OVERLAP, MAX_OVERLAP
from evalapp.forms import PageForm, finite_number, whole_number
from evalapp.validation import (
    ACTIVE_SECONDS_MAX,
    NAME_MAX,
    RUBRIC_MAX,
    SAMPLE_MAX,
    TEXT_MAX,
)


class PageNumberForm(PageForm):
    """?page= of a paged list."""

    page = forms.IntegerField(min_value=1, max_value=10**6, required=False)


class LabelForm(PageForm):
    """A label submitted from the labelling page."""

    verdict = forms.CharField(max_length=20, required=False)
    rationale = forms.CharField(max_length=TEXT_MAX, required=False, strip=False)
    active_seconds = finite_number(0, ACTIVE_SECONDS_MAX, required=False)
    # Set only by the "change my label" forms: a label sent again without it is refused (409).
    change = forms.BooleanField(required=False)


class ReasonForm(PageForm):
    """The reason of a skip or a flag (the service says when it is missing)."""

    reason = forms.CharField(max_length=TEXT_MAX, required=False, strip=False)


class QueueForm(PageForm):
    """A new queue from the queue page: a run (or a sample of it), the pool and the overlap."""

    name = forms.CharField(max_length=NAME_MAX, required=False)
    run_id = forms.CharField(max_length=200, required=False)
    sample = whole_number(1, SAMPLE_MAX, required=False)
    overlap = whole_number(1, MAX_OVERLAP, required=False)
    rubric = forms.CharField(max_length=RUBRIC_MAX, required=False, strip=False)

    def clean_overlap(self):
        return self.cleaned_data["overlap"] or DEFAULT_OVERLAP
