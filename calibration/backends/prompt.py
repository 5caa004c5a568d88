"""The judge's prompt: the placeholders a template may use, its problems as sentences, and the chat messages
it renders to for one item (what the openai backend sends, and what the new-version page previews)."""

from __future__ import annotations

import string

from calibration.backends.base import JudgeItem

# What a prompt template may name, in the order the page lists them.
PLACEHOLDERS = ("question", "answer", "expected", "gold_text", "stratum")

DEFAULT_PROMPT = """Question:
$question

Gold passage:
$gold_text

Expected answer:
$expected

Answer to grade:
$answer

Is the answer consistent with the gold passage and does it answer the question?
Reply with one JSON object only: {"verdict": "correct"} or {"verdict": "incorrect"}, optionally with "reason"."""

DEFAULT_SYSTEM = "You are a strict grader of answers against a reference passage."

_KNOWN = ", ".join(f"${name}" for name in PLACEHOLDERS)


def template_problems(template: str) -> list[str]:
    """Every placeholder of `template` the judge cannot fill, as "line L, column C: unknown placeholder $x (…)".

    A `$` that starts no placeholder (`$5`, a lone `$`) is kept as written when rendered, so it is no problem;
    a misspelt name (`$anser`) would reach the judge as it stands, so it is.
    """
    problems = []
    for match in string.Template.pattern.finditer(template or ""):
        name = match.group("named") or match.group("braced")
        if name is None or name in PLACEHOLDERS:
            continue
        start = match.start()
        line = template.count("\n", 0, start) + 1
        column = start - (template.rfind("\n", 0, start) + 1) + 1
        written = f"${name}" if match.group("named") else f"${{{name}}}"
        problems.append(
            f"line {line}, column {column}: unknown placeholder {written} (known: {_KNOWN}; write $$ for a dollar sign)"
        )
    return problems


def prompt_messages(*, template: str, system: str, rubric: str, item: JudgeItem) -> list[dict]:
    """The system and user messages for one item: the template (or the default prompt) filled in."""
    user = string.Template(template or DEFAULT_PROMPT).safe_substitute(
        question=item.question,
        answer=item.answer,
        expected=item.expected or "(none given)",
        gold_text=item.gold_text or "(no gold passage)",
        stratum=item.stratum,
    )
    return [
        {"role": "system", "content": (system or DEFAULT_SYSTEM) + ("\n\nRubric:\n" + rubric if rubric else "")},
        {"role": "user", "content": user},
    ]
