"""What a chat judge is told about the criteria a version scores, the structured-output schema it is asked
to follow, and the strict reading of its reply. No Django.

The reply is one JSON object with the verdict and one field per criterion. A criterion's value must be one
of its definition's values (a whole number reads as its text: 4 is "4"); anything else (missing, out of
range, no JSON at all) is `invalid` for that criterion alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

INVALID = "invalid"
# How the reply's shape is asked for, strictest first: a JSON schema, any JSON object, the prompt alone.
MODES = ("json_schema", "json_object", "plain")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def criteria_instructions(criteria: list[dict]) -> str:
    """The lines added to the prompt: each criterion with the values it may take."""
    lines = [
        "",
        "Also score the answer on these criteria, as fields of the same JSON object (one value each):",
    ]
    for c in criteria:
        order = " (worst first)" if c["kind"] == "ordinal" else ""
        lines.append(f"- {c['name']}: one of {', '.join(c['values'])}{order}")
    return "\n".join(lines)


def response_schema(criteria: list[dict]) -> dict[str, Any]:
    """The `json_schema` response format: the verdict and every criterion, each an enum, all required."""
    properties: dict[str, Any] = {"verdict": {"type": "string", "enum": ["correct", "incorrect"]}}
    for c in criteria:
        properties[c["name"]] = {"type": "string", "enum": list(c["values"])}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


def reply_object(content: object) -> dict | None:
    """The JSON object of a reply (the whole text, a fenced block, or the outermost braces), else None."""
    if not isinstance(content, str):
        return None
    text = content.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    candidates = [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def criteria_values(obj: dict | None, criteria: list[dict]) -> dict[str, str]:
    """{criterion: its value in the reply, or "invalid" when missing or not one of its values}."""
    out = {}
    for c in criteria:
        value = obj.get(c["name"]) if obj is not None else None
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        out[c["name"]] = value if isinstance(value, str) and value in c["values"] else INVALID
    return out
