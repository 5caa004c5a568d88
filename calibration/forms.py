"""Forms the calibration pages parse their input with."""

from django import forms

from evalapp.forms import PageForm, whole_number
from evalapp.validation import NAME_MAX, SAMPLE_MAX, STORED_SEED_MAX

DIRECTION_CHOICES = [
    ("", "any"),
    ("judge_passes", "judge passes, humans fail"),
    ("judge_fails", "judge fails, humans pass"),
    ("invalid", "invalid output"),
]


class DisagreementFilterForm(PageForm):
    """The judge version page's disagreement filters and page."""

    stratum = forms.CharField(max_length=100, required=False)
    direction = forms.ChoiceField(choices=DIRECTION_CHOICES, required=False)
    page = whole_number(1, 1_000_000, required=False)


class CalibrateForm(PageForm):
    """Start a calibration from a judge version's page."""

    dataset = forms.CharField(max_length=NAME_MAX, required=False)
    sample = whole_number(1, SAMPLE_MAX, required=False, label="sample size")
    seed = whole_number(0, STORED_SEED_MAX, required=False)

    def clean_sample(self):
        return self.cleaned_data["sample"] or 100

    def clean_seed(self):
        return self.cleaned_data["seed"] or 0
