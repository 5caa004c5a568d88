"""What every page form shares: bounds stated in the field, refusals as the one domain error.

Pages parse their input with a form (never a bare int(request.POST[...])); `parsed()` gives the
cleaned data or raises ServiceError naming each field, which the page shows like any other refusal.
"""

from typing import Any, cast

from django import forms
from django.core.validators import MaxLengthValidator
from django.forms.utils import pretty_name

from evalapp.errors import Problem, ServiceError


class FormError(ServiceError):
    """A page form's refusal: the problems name the fields (as the API does), `labels` says each field as
    the page names it ("the sample size"), for page_text()."""

    def __init__(self, message: str, problems: list[Problem], labels: dict[str, str]):
        super().__init__(message, problems)
        self.labels = labels


class PageForm(forms.Form):
    """A form whose refusals are a FormError (status 400) naming each field, each said as a phrase that
    follows the field's label ("is required", "must be at most 5 characters"), never Django's own
    sentences. A field's label is its `label`, or its name in words."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            messages = field.error_messages
            messages["required"] = "is required"
            if isinstance(field, forms.ChoiceField):
                values = [str(value) for value, _ in cast(list[tuple[Any, Any]], field.choices)]
                allowed = ", ".join(v for v in values if v) + (" (or empty)" if "" in values else "")
                messages["invalid_choice"] = f"must be one of {allowed}, not %(value)r"
            if isinstance(field, forms.CharField) and field.max_length is not None:
                messages["max_length"] = "must be at most %(limit_value)d characters (it has %(show_value)d)"
                for validator in field.validators:
                    if isinstance(validator, MaxLengthValidator):
                        validator.message = messages["max_length"]

    def labels(self) -> dict[str, str]:
        return {name: "the " + (field.label or pretty_name(name)).lower() for name, field in self.fields.items()}

    def parsed(self, message: str = "the form is not valid; nothing was changed") -> dict[str, Any]:
        if self.is_valid():
            return self.cleaned_data
        raise FormError(
            message,
            [
                Problem(str(text), field=None if name == "__all__" else name)
                for name, texts in self.errors.items()
                for text in texts
            ],
            self.labels(),
        )


def whole_number(minimum: int, maximum: int, **kwargs: Any) -> forms.IntegerField:
    """An integer field whose every refusal states the allowed range."""
    message = f"must be a whole number from {minimum:,} to {maximum:,}"
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


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def page_text(exc: ServiceError, doing: str = "") -> str:
    """A refusal as a page says it: one sentence, the refusal's message, then each problem with its field
    named by its label ("Cannot create the queue; nothing was written: the sample size must be a whole
    number from 1 to 1,000,000."). Fields of a refusal from a service (not a form) are named in words.
    `doing` says what was refused when the message does not ("cannot start the calibration")."""
    message = exc.message if not doing or exc.message == doing else f"{doing}: {exc.message}"
    if not exc.problems:
        return _sentence(message)
    return _sentence(f"{message}: " + sentences(exc))


def sentences(exc: ServiceError, labels: dict[str, str] | None = None) -> str:
    """The problems alone, as page_text() says them ("the sample size must be a whole number from 1 to
    1,000,000; the seed …"), each field by `labels`, else the form's labels, else its name in words;
    the refusal's message when it has no problems. For a page that frames the refusal itself."""
    if not exc.problems:
        return exc.message
    names = {**getattr(exc, "labels", {}), **(labels or {})}
    said = []
    for problem in exc.problems:
        name = names.get(problem.field or "") or (problem.field or "").replace("_", " ")
        where = f"line {problem.line}: " if problem.line is not None else ""
        said.append(f"{where}{name} {problem.message}".strip())
    return "; ".join(said)
