"""Forms the calibration and comparison pages parse their input with."""
from django import forms

from calibration.comparisons import PLANNER_GAP_MIN, PLANNER_N_MAX
from evalapp.forms import PageForm, finite_number, whole_number
from evalapp.validation import NAME_MAX, SAMPLE_MAX, STORED_SEED_MAX


class CalibrateForm(PageForm):
    """Start a calibration from a judge version's page."""

    dataset = forms.CharField(max_length=NAME_MAX, required=False)
    sample = whole_number(1, SAMPLE_MAX, required=False)
    seed = whole_number(0, STORED_SEED_MAX, required=False)

    def clean_sample(self):
        return self.cleaned_data["sample"] or 100

    def clean_seed(self):
        return self.cleaned_data["seed"] or 0


class PlannerForm(PageForm):
    """The sample-size planner's inputs (the API's PlannerFilterSerializer, as a form)."""

    n = whole_number(1, PLANNER_N_MAX, required=False)
    gap = finite_number(PLANNER_GAP_MIN, 100, required=False)
    discordant_rate = finite_number(0.0001, 1, required=False)
    dataset = forms.CharField(max_length=NAME_MAX, required=False)
