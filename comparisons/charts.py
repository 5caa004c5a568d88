"""Chart geometry for the comparison pages: pure functions from a selector's answer to the numbers an
SVG template draws (no Django, no database)."""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal


def fixed(value: float, digits: int) -> str:
    """A number as the pages print it: `digits` decimals, halves rounded away from zero, no "-0.0". The
    same rounding as Django's floatformat, so a bound the chart labels and the table prints agree."""
    rounded = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{abs(rounded) if rounded == 0 else rounded:f}"


SERIES_COLOURS = ("#0b5cad", "#b42318", "#1a7f37", "#9a6700", "#6e40c9", "#0e7490")


def interval_chart(cmp: dict) -> dict:
    """Two horizontal intervals (paired above, naive below) on one points axis with zero, the
    run-to-run band (±width around zero) and the resolvable gap (±r) marked."""
    width, left, right = 640, 130, 20
    lo_vals = [cmp["ci95"][0], cmp["naive_ci95"][0], 0.0, -cmp["resolvable_gap_points"]]
    hi_vals = [cmp["ci95"][1], cmp["naive_ci95"][1], 0.0, cmp["resolvable_gap_points"]]
    band = cmp.get("band")
    if band:
        lo_vals.append(-band["width_points"])
        hi_vals.append(band["width_points"])
    lo, hi = min(lo_vals), max(hi_vals)
    pad = max((hi - lo) * 0.08, 0.5)
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return round(left + (v - lo) / (hi - lo) * (width - left - right), 2)

    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 25, 50) if (hi - lo) / s <= 12)
    ticks = []
    t = (lo // step) * step
    while t <= hi:
        if t >= lo:
            ticks.append({"x": x(t), "label": f"{t:g}"})
        t += step
    rows = [
        {
            "label": "paired 95%",
            "y": 40,
            "x1": x(cmp["ci95"][0]),
            "x2": x(cmp["ci95"][1]),
            "cls": "paired",
            "text": f"[{fixed(cmp['ci95'][0], 1)}, {fixed(cmp['ci95'][1], 1)}]",
        },
        {
            "label": "naive 95%",
            "y": 80,
            "x1": x(cmp["naive_ci95"][0]),
            "x2": x(cmp["naive_ci95"][1]),
            "cls": "naive",
            "text": f"[{fixed(cmp['naive_ci95'][0], 1)}, {fixed(cmp['naive_ci95'][1], 1)}]",
        },
    ]
    return {
        "width": width,
        "height": 130,
        "left": left,
        "right_edge": width - right,
        "rows": rows,
        "zero": x(0.0),
        "diff": x(cmp["diff_points"]),
        "ticks": ticks,
        "band": (
            {
                "x1": x(-band["width_points"]),
                "x2": x(band["width_points"]),
                "w": round(x(band["width_points"]) - x(-band["width_points"]), 2),
            }
            if band
            else None
        ),
        "resolvable": {"x1": x(-cmp["resolvable_gap_points"]), "x2": x(cmp["resolvable_gap_points"])},
    }


def _when(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


def series_chart(data: dict) -> dict:
    """Points placed by time (ordinal when all share a time), one polyline per segment, so the line
    is never drawn across a break; each break is a dashed vertical rule with its explanation."""
    width, height, left, right, top, bottom = 760, 300, 56, 20, 20, 40
    points = [p for line in data["lines"] for seg in line["segments"] for p in seg["points"]]
    points += [b for line in data["lines"] for seg in line["segments"] for b in seg["backfilled"] if b["resolved"]]
    scores = [p["score"] for p in points if p["score"] is not None]
    if not scores:
        return {"empty": True, "width": width, "height": height}
    times = sorted({_when(p["started_at"]) for p in points})
    index = {t: i for i, t in enumerate(times)}
    lo, hi = min(scores), max(scores)
    span = max(hi - lo, 0.02)
    lo, hi = max(0.0, lo - span * 0.15), min(1.0, hi + span * 0.15)
    if hi - lo < 1e-9:
        lo, hi = max(0.0, lo - 0.05), min(1.0, hi + 0.05)

    def x(iso: str) -> float:
        if len(times) == 1:
            return (left + width - right) / 2
        return round(left + index[_when(iso)] / (len(times) - 1) * (width - left - right), 2)

    def y(s: float) -> float:
        return round(top + (hi - s) / (hi - lo) * (height - top - bottom), 2)

    every = max(1, len(times) // 10)
    xticks = [{"x": x(t.isoformat()), "label": t.strftime("%m-%d")} for i, t in enumerate(times) if i % every == 0]
    yticks = []
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        yticks.append({"y": y(v), "label": fixed(v, 3)})
    lines, breaks = [], []
    for n, line in enumerate(data["lines"]):
        colour = SERIES_COLOURS[n % len(SERIES_COLOURS)]
        segs = []
        for i, seg in enumerate(line["segments"]):
            pts = [
                {"x": x(p["started_at"]), "y": y(p["score"]), "run_id": p["run_id"], "score": p["score"], "n": p["n"]}
                for p in seg["points"]
                if p["score"] is not None
            ]
            back = [
                {"x": x(b["started_at"]), "y": y(b["score"]), "run_id": b["run_id"], "score": b["score"], "n": b["n"]}
                for b in seg["backfilled"]
                if b["resolved"]
            ]
            segs.append(
                {
                    "index": i,
                    "points": pts,
                    "backfilled": back,
                    "polyline": " ".join(f"{p['x']},{p['y']}" for p in sorted(back + pts, key=lambda p: p["x"])),
                    "dataset_hash": seg["dataset_hash"],
                    "evaluator_config_hash": seg["evaluator_config_hash"],
                    "version": seg["version"],
                }
            )
        for i, br in enumerate(line["breaks"]):
            before = segs[i]["points"][-1]["x"] if segs[i]["points"] else left
            after = segs[i + 1]["points"][0]["x"] if segs[i + 1]["points"] else before
            bx = round((before + after) / 2, 2)
            breaks.append(
                {
                    "x": bx,
                    "system": line["system"],
                    "text": br["text"],
                    "changed": br["changed"],
                    "label_y": top + 12 + 14 * (len(breaks) % 3),
                    "number": len(breaks) + 1,
                    "anchor": "end" if bx > width * 0.6 else "start",
                    "label_x": bx - 4 if bx > width * 0.6 else bx + 4,
                }
            )
        lines.append({"system": line["system"], "colour": colour, "segments": segs})
    return {
        "empty": False,
        "width": width,
        "height": height,
        "left": left,
        "right_edge": width - right,
        "top": top,
        "bottom_edge": height - bottom,
        "yticks": yticks,
        "xticks": xticks,
        "lines": lines,
        "breaks": breaks,
    }
