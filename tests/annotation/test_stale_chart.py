"""The stale-gold chart's geometry, hand-worked: plot area x 48..624, y 16..204 (188 px), top of the axis
at 10 % (the least it reaches, so the 5-8 % band always shows), or 100 % at most."""

from annotation.stale_chart import EXPECTED_LABEL, stale_chart

DAY0, DAY1 = "2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"


def test_two_states_a_day_apart():
    chart = stale_chart(
        [{"began": DAY0, "stale": 0, "stale_share": 0.0}, {"began": DAY1, "stale": 1, "stale_share": 0.05}]
    )
    # y(s) = 16 + (0.10 - s) / 0.10 * 188: y(0) = 204, y(0.05) = 110, y(0.08) = 53.6.
    assert [(p["x"], p["y"]) for p in chart["points"]] == [(48.0, 204.0), (624.0, 110.0)]
    # A share holds until the next state: a step, then on to the right edge.
    assert chart["polyline"] == "48.0,204.0 624.0,204.0 624.0,110.0 624,110.0"
    assert chart["band"] == {"y": 53.6, "width": 576, "height": 56.4, "label_y": 49.6}
    assert chart["band_label"] == EXPECTED_LABEL == "expected after six months of normal editing"
    assert [(t["label"], t["y"]) for t in chart["yticks"]] == [
        ("0%", 204.0),
        ("2%", 166.4),
        ("4%", 128.8),
        ("6%", 91.2),
        ("8%", 53.6),
        ("10%", 16.0),
    ]
    assert chart["xticks"] == [
        {"x": 48.0, "label": "01-01 00:00", "anchor": "start"},
        {"x": 624.0, "label": "01-02 00:00", "anchor": "end"},
    ]
    assert chart["now_percent"] == "5.0"


def test_the_axis_stops_at_100_percent_and_one_state_sits_in_the_middle():
    chart = stale_chart([{"began": DAY0, "stale": 9, "stale_share": 0.9}])
    assert [t["label"] for t in chart["yticks"]] == ["0%", "20%", "40%", "60%", "80%", "100%"]
    assert chart["points"][0]["x"] == 336.0 and chart["points"][0]["y"] == 34.8  # 16 + 0.1 * 188
    assert chart["xticks"] == [{"x": 336.0, "label": "01-01 00:00", "anchor": "middle"}]


def test_no_history_is_empty():
    assert stale_chart([]) == {"empty": True, "width": 640, "height": 240}
