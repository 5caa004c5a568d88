"""Geometry of the stale-gold chart on the dataset page: a pure function from the stale history
(annotation.selectors.stale_history) to the numbers the SVG template draws (no database)."""

import math
from datetime import datetime

# The share the document expects after six months of normal editing; drawn as a band.
EXPECTED_BAND = (0.05, 0.08)
EXPECTED_LABEL = "expected after six months of normal editing"


def stale_chart(history: list[dict]) -> dict:
    """Points placed by time (evenly when all states share a time), a step line (a share holds until the
    next state), the 5-8 % band, y ticks in percent; the y axis reaches at least 10 % so the band shows."""
    width, height, left, right, top, bottom = 640, 240, 48, 16, 16, 36
    if not history:
        return {"empty": True, "width": width, "height": height}
    times = [datetime.fromisoformat(h["began"]) for h in history]
    span = (times[-1] - times[0]).total_seconds()
    hi = max(0.10, max(h["stale_share"] for h in history) * 1.15)
    step = next(s for s in (0.02, 0.05, 0.1, 0.2, 0.25) if hi / s <= 6)
    hi = min(1.0, step * math.ceil(round(hi / step, 9)))

    def x(i: int) -> float:
        if len(times) == 1:
            return (left + width - right) / 2
        frac = (times[i] - times[0]).total_seconds() / span if span > 0 else i / (len(times) - 1)
        return round(left + frac * (width - left - right), 2)

    def y(share: float) -> float:
        return round(top + (hi - share) / hi * (height - top - bottom), 2)

    points = [
        {"x": x(i), "y": y(h["stale_share"]), "began": h["began"], "stale": h["stale"], "share": h["stale_share"]}
        for i, h in enumerate(history)
    ]
    steps = []
    for i, p in enumerate(points):
        if i:
            steps.append(f"{p['x']},{points[i - 1]['y']}")
        steps.append(f"{p['x']},{p['y']}")
    steps.append(f"{width - right},{points[-1]['y']}")
    yticks = []
    for k in range(round(hi / step) + 1):
        yticks.append({"y": y(k * step), "label": f"{round(k * step * 100):d}%"})
    every = max(1, len(points) // 6)
    # States a day or two apart are told apart by the hour; the end labels lean inwards to stay inside.
    fmt = "%m-%d %H:%M" if span < 2 * 86400 else "%Y-%m-%d"
    xticks = [
        {
            "x": p["x"],
            "label": times[i].strftime(fmt),
            "anchor": "start" if i == 0 and len(points) > 1 else "end" if i == len(points) - 1 and i else "middle",
        }
        for i, p in enumerate(points)
        if i % every == 0 or i == len(points) - 1
    ]
    lo_band, hi_band = EXPECTED_BAND
    return {
        "empty": False,
        "width": width,
        "height": height,
        "left": left,
        "right": width - right,
        "bottom": height - bottom,
        "points": points,
        "polyline": " ".join(steps),
        "yticks": yticks,
        "xticks": xticks,
        "label_y": height - bottom + 16,
        "band": {
            "y": y(hi_band),
            "width": width - right - left,
            "height": round(y(lo_band) - y(hi_band), 2),
            "label_y": round(y(hi_band) - 4, 2),
        },
        "now_percent": f"{history[-1]['stale_share'] * 100:.1f}",
        "band_label": EXPECTED_LABEL,
    }
