"""Chart geometry for the judge pages: pure functions from a gate or a kappa history to the numbers an
SVG template draws (no Django, no database)."""


def _x(value, lo=-0.2, hi=1.0, width=400, pad=10):
    """Map a kappa in [lo, hi] to an x coordinate."""
    value = min(hi, max(lo, value))
    return round(pad + (value - lo) / (hi - lo) * (width - 2 * pad), 1)


def kappa_scale(gate: dict) -> dict | None:
    """Coordinates of the kappa the gate decides on (the conservative one when judge outputs were invalid),
    its interval and the threshold on one axis."""
    key = "kappa_conservative" if gate.get("invalid") and gate.get("kappa_conservative") is not None else "kappa"
    value = gate.get(key)
    if value is None:
        return None
    ci = gate.get(f"{key}_ci95") or [value, value]
    ticks = [{"x": _x(t), "label": f"{t:g}"} for t in (0, 0.2, 0.4, 0.6, 0.8, 1.0)]
    return {
        "label": "conservative kappa" if key == "kappa_conservative" else "kappa",
        "value": value,
        "kappa": _x(value),
        "lo": _x(ci[0]),
        "hi": _x(ci[1]),
        "threshold": _x(gate["threshold"]),
        "ticks": ticks,
    }


def share_bars(gate: dict) -> list[dict]:
    """Raw agreement beside chance and the always-correct baseline, as bar widths."""
    rows = [
        ("raw agreement", gate.get("raw_agreement")),
        ("chance agreement", gate.get("chance_agreement")),
        ("always 'correct'", gate.get("always_correct_agreement")),
    ]
    return [
        {"label": label, "value": v, "width": round(300 * v, 1), "y": 8 + i * 26}
        for i, (label, v) in enumerate(rows)
        if v is not None
    ]


def heatmap(gate: dict) -> list[dict]:
    """Confusion cells (human rows, judge columns) with a shade by count."""
    confusion = gate.get("confusion") or {}
    if not confusion:
        return []
    humans = ["correct", "incorrect"]
    judges = ["correct", "incorrect"] + (["invalid"] if any(k.endswith("/invalid") for k in confusion) else [])
    top = max(confusion.values()) or 1
    cells = []
    for r, h in enumerate(humans):
        for c, j in enumerate(judges):
            n = confusion.get(f"{h}/{j}", 0)
            cells.append(
                {
                    "x": 110 + c * 90,
                    "y": 30 + r * 50,
                    "n": n,
                    "human": h,
                    "judge": j,
                    "opacity": round(0.08 + 0.85 * n / top, 2),
                    "agree": h == j,
                    "dark": n / top > 0.55,
                }
            )
    return cells


def stratum_bars(gate: dict) -> list[dict]:
    """Per-stratum kappa bars on the same axis as the threshold."""
    rows = []
    for i, (name, st) in enumerate(sorted((gate.get("per_stratum") or {}).items())):
        kappa = st.get("kappa")
        rows.append(
            {
                "name": name,
                "n": st["n"],
                "kappa": kappa,
                "raw": st.get("raw_agreement"),
                "y": 6 + i * 26,
                "width": round(_x(kappa) - _x(-0.2), 1) if kappa is not None else 0,
                "too_small": st.get("too_small"),
                "below": kappa is not None and kappa < gate["threshold"],
            }
        )
    return rows


def history_chart(history: list[dict], threshold: float) -> dict:
    """Kappa by version number with interval whiskers and the threshold line."""
    width, height, pad = 420, 160, 30
    count = max(1, len(history))

    def y(v):
        v = min(1.0, max(-0.2, v))
        return round(height - pad - (v + 0.2) / 1.2 * (height - 2 * pad), 1)

    points = []
    for i, row in enumerate(history):
        x = round(pad + (i + 0.5) * (width - 2 * pad) / count, 1)
        point = {"x": x, "label": f"v{row['version']}", "kappa": row["kappa"], "id": row["id"]}
        if row["kappa"] is not None:
            point["y"] = y(row["kappa"])
            if row["ci"]:
                point["lo"], point["hi"] = y(row["ci"][0]), y(row["ci"][1])
        points.append(point)
    line = " ".join(f"{p['x']},{p['y']}" for p in points if "y" in p)
    return {
        "width": width,
        "height": height,
        "points": points,
        "line": line,
        "threshold_y": y(threshold),
        "axis": [{"y": y(t), "label": f"{t:g}"} for t in (0, 0.5, 1.0)],
        "right": width - pad,
        "left": pad,
    }
