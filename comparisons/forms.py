"""Forms the comparison pages parse their input with."""

from django import forms

from comparisons.selectors.planning import PLANNER_GAP_MIN, PLANNER_N_MAX
from evalapp.forms import PageForm, finite_number, whole_number
from evalapp.validation import NAME_MAX


class PlannerForm(PageForm):
    """The sample-size planner's inputs (the API's PlannerFilterSerializer, as a form)."""

    n = whole_number(1, PLANNER_N_MAX, required=False, label="set size")
    gap = finite_number(PLANNER_GAP_MIN, 100, required=False, label="gap (points)")
    discordant_rate = finite_number(0.0001, 1, required=False, label="discordance rate")
    dataset = forms.CharField(max_length=NAME_MAX, required=False)
