"""What every page form shares: bounds stated in the field, refusals as the one domain error.

Pages parse their input with a form (never a bare int(request.POST[...])); `parsed()` gives the
cleaned data or raises ServiceError naming each field, which the page shows like any other refusal.
"""

from typing import Any

from django import forms

from evalapp.errors import Problem, ServiceError


class PageForm(forms.Form):
    """A form whose refusals are a ServiceError (status 400) naming each field."""

    def parsed(self, message: str = "the form is not valid; nothing was changed") -> dict[str, Any]:
        if self.is_valid():
            return self.cleaned_data
        raise ServiceError(
            message,
            [
                Problem(str(text), field=None if name == "__all__" else name)
                for name, texts in self.errors.items()
                for text in texts
            ],
        )


def whole_number(minimum: int, maximum: int, **kwargs: Any) -> forms.IntegerField:
    """An integer field whose every refusal states the allowed range."""
    message = f"must be a whole number from {minimum} to {maximum}"
    return forms.IntegerField(
        min_value=minimum,
        max_value=maximum,
        error_messages={"invalid": message, "min_value": message, "max_value": message},
        **kwargs,
    )


def finite_number(minimum: float, maximum: float, **kwargs: Any) -> forms.FloatField:
    """A float field refusing NaN, infinities and values outside the range, stating the range."""
    message = f"must be a number from {minimum:g} to {maximum:g}"
    return forms.FloatField(
        min_value=minimum,
        max_value=maximum,
        error_messages={"invalid": message, "min_value": message, "max_value": message},
        **kwargs,
    )


def sentences(exc: ServiceError, labels: dict[str, str]) -> str:
    """A refusal as the sentences a page shows: each problem with its field named as a person would
    ("the sample size must be a whole number from 1 to 1000000"), or the refusal's own message."""
    if not exc.problems:
        return exc.message
    said = []
    for problem in exc.problems:
        name = labels.get(problem.field or "", problem.field or "")
        said.append(f"{name} {problem.message}".strip())
    return "; ".join(said)
