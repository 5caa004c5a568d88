"""Forms the calibration pages parse their input with."""

import json
import re

from django import forms

from calibration.backends import BACKENDS
from calibration.backends.prompt import template_problems
from calibration.services.judge_criteria import criterion_options
from evalapp.forms import PageForm, finite_number, whole_number
from evalapp.jsonl import parse_json_text
from evalapp.validation import NAME_MAX, RUBRIC_MAX, SAMPLE_MAX, STORED_SEED_MAX

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
    # A criterion the version scores: its values' disagreements instead of the verdict's.
    criterion = forms.CharField(max_length=100, required=False)
    page = whole_number(1, 1_000_000, required=False)


class CompareForm(PageForm):
    """The judge version page's "compare with" choice: another version of the same judge."""

    compare = whole_number(1, 2**63 - 1, required=False, label="version to compare with")


class CalibrateForm(PageForm):
    """Start a calibration from a judge version's page."""

    dataset = forms.CharField(max_length=NAME_MAX, required=False)
    sample = whole_number(1, SAMPLE_MAX, required=False, label="sample size")
    seed = whole_number(0, STORED_SEED_MAX, required=False)
    repeats = whole_number(1, 20, required=False, label="repeats")

    def clean_sample(self):
        return self.cleaned_data["sample"] or 100

    def clean_seed(self):
        return self.cleaned_data["seed"] or 0

    def clean_repeats(self):
        return self.cleaned_data["repeats"] or 1


REQUIRED = {"required": "is required"}


class JsonObjectField(forms.CharField):
    """A JSON object typed into a text area (empty: {}), parsed as strictly as the JSON Lines imports are."""

    def __init__(self, **kwargs):
        super().__init__(required=False, strip=False, **kwargs)

    def to_python(self, value):
        text = (super().to_python(value) or "").strip()
        if not text:
            return {}
        parsed, problem = parse_json_text(text)
        if problem is not None:
            detail = str(problem)
            try:
                json.loads(text)
            except json.JSONDecodeError as exc:
                # A text area has lines: name the line as well as the column.
                detail = f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
            except ValueError:
                pass
            raise forms.ValidationError(f"are not valid JSON ({detail})")
        if not isinstance(parsed, dict):
            raise forms.ValidationError('must be a JSON object, such as {"max_tokens": 200}')
        return parsed


class TextAreaField(forms.CharField):
    """A text area's text as typed, with the browser's CRLF line ends made LF: the same prompt from a file and
    from the page must hash to the same configuration."""

    def __init__(self, **kwargs):
        super().__init__(required=False, strip=False, **kwargs)

    def to_python(self, value):
        return (super().to_python(value) or "").replace("\r\n", "\n").replace("\r", "\n")


class JudgeVersionForm(PageForm):
    """A new judge version from the judges pages: what `create_judge_version` takes (the service checks
    the rest: the judge's name, lengths, the model the openai backend needs, the URL allow list)."""

    judge = forms.CharField(error_messages=REQUIRED)
    backend = forms.ChoiceField(
        choices=[(b, b) for b in BACKENDS],
        error_messages={**REQUIRED, "invalid_choice": f"must be one of {', '.join(BACKENDS)}"},
    )
    model = forms.CharField(required=False)
    prompt_template = TextAreaField()
    rubric = TextAreaField()
    params = JsonObjectField()
    threshold = finite_number(-1, 1, required=False)


class JudgeCriteriaForm(PageForm):
    """The new-version form's criteria field, parsed beside JudgeVersionForm."""

    criteria = forms.CharField(required=False, max_length=5000)

    def clean_criteria(self):
        """`NAME[=THRESHOLD]` separated by commas or spaces, as [{"name", "threshold"}] (None: none given)."""
        items = [c for c in re.split(r"[,\s]+", self.cleaned_data["criteria"] or "") if c]
        return criterion_options(items) if items else None


class NewVersionQuery(PageForm):
    """The new-version page's query: the judge to add a version to, and the version to start from."""

    judge = forms.CharField(max_length=NAME_MAX, required=False)
    version = whole_number(1, 2**63 - 1, required=False)


# A text longer than its column, as every refusal says it.
TOO_LONG = {"max_length": "is %(show_value)d characters long; at most %(limit_value)d are allowed"}


class PromptPreviewForm(PageForm):
    """The prompt preview: a template (and the parameters' `system`, the rubric) over one item of a dataset."""

    dataset = forms.CharField(max_length=NAME_MAX, error_messages=REQUIRED)
    judge = forms.CharField(max_length=NAME_MAX, required=False)
    qid = forms.CharField(max_length=200, required=False)
    backend = forms.ChoiceField(choices=[("", "")] + [(b, b) for b in BACKENDS], required=False)
    prompt_template = TextAreaField(max_length=RUBRIC_MAX, error_messages=TOO_LONG)
    rubric = TextAreaField(max_length=RUBRIC_MAX, error_messages=TOO_LONG)
    params = JsonObjectField()

    def clean_prompt_template(self):
        template = self.cleaned_data["prompt_template"]
        problems = template_problems(template)
        if problems:
            raise forms.ValidationError(problems)
        return template
