"""The criterion radio groups of the labelling and adjudication pages: what the template draws from a
queue's criteria, and the values a page's form sent back."""


def criterion_controls(criteria: list[dict], *, labelling: bool, chosen: dict[str, str] | None = None) -> dict:
    """The template context of the criterion radio groups (_criteria.html): each criterion with its values'
    keys (digits for an ordinal scale, letters for a categorical one), whether a value is required, whether
    it is settled here (adjudication: only the disputed ones) and the value already `chosen` (one's own)."""
    shown = []
    chosen = chosen or {}
    for c in criteria:
        keys = "123456789" if c["kind"] == "ordinal" else "abcdefghijklmnopqrstuvwxyz"
        settle = labelling or bool(c.get("disputed"))
        options = [
            {"value": v, "key": keys[i] if i < len(keys) else "", "checked": chosen.get(c["name"]) == v}
            for i, v in enumerate(c["values"])
        ]
        shown.append({**c, "options": options, "required": settle, "settle": settle})
    return {
        "criteria": shown,
        "any_ordinal": any(c["kind"] == "ordinal" and c["settle"] for c in shown),
        "any_categorical": any(c["kind"] != "ordinal" and c["settle"] for c in shown),
    }


def posted_values(request) -> dict[str, str]:
    """The criterion values a page's form sent ("values.NAME" radios)."""
    return {k[len("values.") :]: v for k, v in request.POST.items() if k.startswith("values.")}
