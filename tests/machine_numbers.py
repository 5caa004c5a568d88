"""Numbers a page writes for machines to read (SVG coordinates and sizes, ARIA values) must be plain decimals
whatever the language the page renders in: German writes 0,5 for a half, and a circle at cx="56,0" is drawn
nowhere. Pages wrap their charts in {% localize off %} (or pass such a value through |unlocalize)."""

import re

from django.utils import translation

# SVG's own attributes that take a number (a length may end in %).
_SVG_NUMBERS = re.compile(r'\s(x|y|x1|x2|y1|y2|cx|cy|r|width|height|fill-opacity|stroke-width)="([^"]*)"')
_PLAIN = re.compile(r"-?\d+(\.\d+)?%?")


def machine_numbers(html: str) -> list[str]:
    """Every such number of the page: inside each <svg>, its numeric attributes, its viewBox's four numbers and
    its polylines' points; anywhere, aria-valuenow / -valuemin / -valuemax."""
    out: list[str] = []
    for svg in re.findall(r"<svg\b.*?</svg>", html, flags=re.S):
        out += [value for _name, value in _SVG_NUMBERS.findall(svg)]
        for box in re.findall(r'viewBox="([^"]*)"', svg):
            out += box.split(" ")
        for points in re.findall(r'points="([^"]*)"', svg):
            for pair in points.split():
                out += pair.split(",", 1) if pair.count(",") == 1 else [pair]
    out += re.findall(r'aria-value(?:now|min|max)="([^"]*)"', html)
    return out


def assert_machine_numbers_plain(html: str, *, at_least: int) -> None:
    """At least `at_least` such numbers on the page (so the check reads a chart), and every one plain."""
    numbers = machine_numbers(html)
    assert len(numbers) >= at_least, numbers
    assert [n for n in numbers if not _PLAIN.fullmatch(n)] == []


def page_in_german(client, path: str, params: dict | None = None) -> str:
    """The page's HTML rendered in German (which writes 0,5 for a half): the language to check these numbers in."""
    with translation.override("de"):
        return client.get(path, params or {}).content.decode()
