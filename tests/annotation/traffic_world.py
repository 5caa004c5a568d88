"""A small hand-built world for the traffic tests: a set of three questions with a budget, and a traffic
log whose shares are worked by hand in the tests."""

from pathlib import Path
from typing import cast

from annotation.models import Dataset
from tests.conftest import write_jsonl
from tests.factories import DatasetFactory, record, version

BUDGET = {"billing": 50.0, "account": 30.0, "other": 20.0}

SET = [
    record("b1", question="How do I pay my bill?", stratum="billing"),
    record("b2", question="Where is my invoice?", stratum="billing"),
    record("a1", question="How do I reset my password?", stratum="account"),
]

# 10 lines: 1 in the set ("where is my INVOICE"), 2 repeats of "refund please" (3 askings, 1 row),
# so 9 askings of 6 distinct questions are stored.
TRAFFIC = [
    {"question": "Where is my INVOICE??", "asked_at": "2026-11-01T09:00:00Z"},
    {"question": "Refund please", "asked_at": "2026-11-01T10:00:00Z", "metadata": {"channel": "web"}},
    {"question": "refund,  please!", "asked_at": "2026-11-02T10:00:00Z"},
    {"question": "REFUND please", "asked_at": "2026-10-30T10:00:00Z"},
    {"question": "Can I change my email address?", "asked_at": "2026-11-03T08:00:00Z", "metadata": {"channel": "app"}},
    {"question": "Is there a student discount?", "asked_at": "2026-11-03T09:00:00Z", "channel": "app"},
    {"question": "Do you ship to Norway?", "asked_at": "2026-11-04T09:00:00Z"},
    {"question": "Why was my card charged twice?", "asked_at": "2026-11-04T10:00:00Z"},
    {"question": "What is the refund window", "source": "tickets"},
    {"question": "hello", "asked_at": "2026-11-05"},
]


def traffic_world(tmp_path: Path, *, budget: bool = True):
    """The dataset `shop` (set v1 of three questions) and the traffic file written beside the test."""
    dataset = cast(Dataset, DatasetFactory(name="shop", strata_budget=BUDGET if budget else {}))
    version(dataset, SET)
    return dataset, write_jsonl(tmp_path / "traffic.jsonl", TRAFFIC)
