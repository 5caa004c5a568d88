"""Forms the annotation pages parse their input with (bounds as the services and the API state them)."""

from django import forms

from annotation.models import RULE_KINDS
from annotation.services.queues import DEFAULT_OVERLAP, MAX_OVERLAP
from annotation.services.traffic import PATTERN_MAX, PRIORITY_MAX
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


class QueuePositionForm(PageForm):
    """?after= or ?before= of the tagging list: the qid a page starts after (ends before)."""

    after = forms.CharField(max_length=200, required=False, strip=False)
    before = forms.CharField(max_length=200, required=False, strip=False)


class QueueDisagreementForm(PageForm):
    """?stratum=&page= of a queue statistics page's disagreement list."""

    stratum = forms.CharField(max_length=100, required=False)
    page = forms.IntegerField(min_value=1, max_value=10**6, required=False)


class LabelForm(PageForm):
    """A label submitted from the labelling page."""

    verdict = forms.CharField(max_length=20, required=False)
    rationale = forms.CharField(max_length=TEXT_MAX, required=False, strip=False)
    active_seconds = finite_number(0, ACTIVE_SECONDS_MAX, required=False, label="time spent (seconds)")
    # Set only by the "change my label" forms: a label sent again without it is refused (409).
    change = forms.BooleanField(required=False)


class ReasonForm(PageForm):
    """The reason of a skip or a flag (the service says when it is missing)."""

    reason = forms.CharField(max_length=TEXT_MAX, required=False, strip=False)


class QueueForm(PageForm):
    """A new queue from the queue page: a run (or a sample of it), the pool and the overlap."""

    name = forms.CharField(max_length=NAME_MAX, required=False)
    run_id = forms.CharField(max_length=200, required=False, label="run")
    sample = whole_number(1, SAMPLE_MAX, required=False, label="sample size")
    overlap = whole_number(1, MAX_OVERLAP, required=False, label="overlap (annotators per item)")
    rubric = forms.CharField(max_length=RUBRIC_MAX, required=False, strip=False)
    # Comma-separated criterion names of the run's dataset, and NAME=STEPS tolerances for ordinal ones.
    criteria = forms.CharField(max_length=2000, required=False)
    tolerance = forms.CharField(max_length=2000, required=False)

    def clean_criteria(self):
        return [n.strip() for n in (self.cleaned_data["criteria"] or "").split(",") if n.strip()]

    def clean_tolerance(self):
        out: dict[str, object] = {}
        for given in (self.cleaned_data["tolerance"] or "").split(","):
            if not given.strip():
                continue
            name, sep, steps = given.partition("=")
            if not sep or not steps.strip().lstrip("-").isdigit():
                raise forms.ValidationError(f"{given.strip()!r} must be NAME=STEPS (a whole number)")
            out[name.strip()] = int(steps)
        return out

    def clean_overlap(self):
        return self.cleaned_data["overlap"] or DEFAULT_OVERLAP


# The adjudication list's label sources, as the filter offers them (annotation.selectors.disputes.SOURCES).
SOURCE_CHOICES = [("", "any"), ("queue", "queue"), ("import", "import"), ("app", "app")]


class DisputeFilterForm(PageForm):
    """?source=&queue=&dataset= of the adjudication list."""

    source = forms.ChoiceField(choices=SOURCE_CHOICES, required=False)
    queue = whole_number(1, 2**31 - 1, required=False)
    dataset = forms.CharField(max_length=NAME_MAX, required=False)


class AdjudicationForm(PageForm):
    """A final verdict and its reason from an adjudication page (the service names what is wrong)."""

    verdict = forms.CharField(max_length=20, required=False)
    reason = forms.CharField(max_length=TEXT_MAX, required=False, strip=False)


class CoverageForm(PageForm):
    """?n= of the traffic page: the sample size the expected counts are for."""

    n = whole_number(0, SAMPLE_MAX, required=False, label="sample size")


class TrafficAssignForm(PageForm):
    """The traffic page's manual assignment: the checked questions and a stratum."""

    ids = forms.TypedMultipleChoiceField(coerce=int, choices=(), label="questions")
    stratum = forms.CharField(max_length=100)

    def __init__(self, *args, ids: list[int], **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["ids"]
        assert isinstance(field, forms.TypedMultipleChoiceField)
        field.choices = [(str(i), str(i)) for i in ids]
        field.error_messages["invalid_choice"] = "must be questions listed on the page (reload it)"
        field.error_messages["required"] = "tick at least one question"


class TrafficRuleForm(PageForm):
    """The traffic page's "Add a rule": a keyword, a regular expression or a metadata key=value, its stratum
    and priority (the service checks the pattern and the stratum)."""

    kind = forms.ChoiceField(choices=[(k, k) for k in RULE_KINDS])
    pattern = forms.CharField(max_length=PATTERN_MAX)
    stratum = forms.CharField(max_length=100)
    priority = whole_number(-PRIORITY_MAX, PRIORITY_MAX, required=False)


class TrafficProposeForm(PageForm):
    """The traffic page's "Propose K to tag"."""

    k = whole_number(1, 1000, label="how many to propose")
    seed = whole_number(0, 2**32 - 1, required=False)
