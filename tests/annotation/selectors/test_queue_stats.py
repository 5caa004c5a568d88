"""Queue statistics with three or more labels an item: Fleiss' kappa and Krippendorff's alpha over whole
items beside the pairwise figures, held to statsmodels and the krippendorff package, and blind."""

import json

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from annotation.models import HumanLabel, QueueItem
from annotation.selectors.blind import blind_scope
from annotation.selectors.queue_stats import queue_stats
from annotation.services.claims import queue_next
from annotation.services.labelling import label_submit
from annotation.services.queues import queue_create
from evalstats import bootstrap_kappa_ci

ANNOTATORS = ("ann1", "ann2", "ann3")
# Per item (in the order the queue hands them out), the three annotators' verdicts.
VERDICTS = [
    ("correct", "correct", "correct"),
    ("correct", "correct", "incorrect"),
    ("incorrect", "incorrect", "incorrect"),
    ("correct", "incorrect", "incorrect"),
    ("correct", "correct", "correct"),
    ("incorrect", "incorrect", "correct"),
    ("correct", "correct", "correct"),
    ("incorrect", "incorrect", "incorrect"),
    ("correct", "correct", "incorrect"),
]


def label_everything(queue, pool):
    """Each annotator in turn takes the item the others labelled and gives it its row of VERDICTS."""
    for row in VERDICTS:
        item = None
        for name, verdict in zip(ANNOTATORS, row, strict=True):
            claim = queue_next(queue=queue, annotator=pool[name])
            assert claim is not None
            assert item is None or claim.item.pk == item
            item = claim.item.pk
            label_submit(queue=queue, item_id=item, annotator=pool[name], verdict=verdict)
    assert not QueueItem.objects.filter(queue=queue, status=QueueItem.OPEN).exists()


def reference_table():
    return np.array([[row.count("correct"), row.count("incorrect")] for row in VERDICTS])


@pytest.mark.django_db
def test_overlap_3_adds_fleiss_kappa_and_alpha_over_whole_items(make_queue, pool):
    queue = make_queue(len(VERDICTS), overlap=3, annotators=ANNOTATORS)
    label_everything(queue, pool)
    stats = queue_stats(queue, iters=500, seed=1)
    multi = stats["multi_rater"]
    table = reference_table()
    assert multi["n_items"] == 9
    assert multi["raters"] == 3
    assert multi["metric"] == "nominal"
    assert multi["fleiss_kappa"] == pytest.approx(fleiss_kappa(table), abs=1e-12)
    assert multi["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(value_counts=table, level_of_measurement="nominal"), abs=1e-12
    )
    lo, hi = multi["alpha_ci95"]
    assert lo < multi["krippendorff_alpha"] < hi
    assert multi["warnings"] == []
    # The pairwise figures are still there, unrenamed: 3 pairs an item.
    assert stats["agreement"]["n"] == 27
    assert set(stats["agreement"]["per_pair"]) == {"ann1/ann2", "ann1/ann3", "ann2/ann3"}
    json.dumps(stats, allow_nan=False)


@pytest.mark.django_db
def test_overlap_2_has_no_multi_rater_figures(make_queue, pool):
    queue = make_queue(2, overlap=2)
    for name in ("ann1", "ann2"):
        for _ in range(2):
            claim = queue_next(queue=queue, annotator=pool[name])
            assert claim is not None
            label_submit(queue=queue, item_id=claim.item.pk, annotator=pool[name], verdict="correct")
    assert queue_stats(queue, iters=10)["multi_rater"] is None


@pytest.mark.django_db
def test_zero_iters_gives_alpha_without_an_interval(make_queue, pool):
    queue = make_queue(len(VERDICTS), overlap=3, annotators=ANNOTATORS)
    label_everything(queue, pool)
    multi = queue_stats(queue, iters=0)["multi_rater"]
    assert multi["alpha_ci95"] is None
    assert multi["krippendorff_alpha"] is not None


@pytest.mark.django_db
def test_open_items_and_blind_answers_stay_out_of_the_multi_rater_figures(make_queue, pool):
    queue = make_queue(len(VERDICTS), overlap=3, annotators=ANNOTATORS)
    label_everything(queue, pool)
    # ann4 now sits in the pool of a second queue over the same run with every item open: blind to it.
    queue_create(
        name="second look",
        annotators=["ann4"],
        overlap=1,
        run_id=queue.items.first().answer.run.run_id,
        rubric="Again.",
        seed=3,
        created_by=pool["eng"],
    )
    before = HumanLabel.objects.count()
    stats = queue_stats(queue, iters=50, scope=blind_scope(pool["ann4"]))
    assert stats["multi_rater"]["n_items"] == 0
    assert stats["multi_rater"]["krippendorff_alpha"] is None
    assert stats["multi_rater"]["fleiss_kappa"] is None
    assert stats["blind_excluded"] == 9
    assert HumanLabel.objects.count() == before


@pytest.mark.django_db
def test_a_small_queue_carries_the_coverage_warning(make_queue, pool):
    queue = make_queue(len(VERDICTS), overlap=3, annotators=ANNOTATORS)
    label_everything(queue, pool)
    ag = queue_stats(queue, iters=200, seed=1)["agreement"]
    assert ag["n"] == 27
    assert ag["coverage_warning"].startswith("only 27 item(s) (at least 30 are needed): at this size and prevalence")
    assert ag["coverage_warning"] in ag["warnings"]


@pytest.mark.django_db
def test_queue_strata_are_descriptive_so_the_bootstrap_is_plain(make_queue, pool):
    queue = make_queue(len(VERDICTS), overlap=3, annotators=ANNOTATORS)
    label_everything(queue, pool)
    ag = queue_stats(queue, iters=500, seed=1)["agreement"]
    labels = ["correct", "incorrect"]
    pooled = [[ag["confusion"][f"{x}/{y}"] for y in labels] for x in labels]
    assert len(ag["per_stratum"]) > 1
    assert ag["bootstrap_method"] == "plain"
    assert ag["bootstrap_ci95"] == bootstrap_kappa_ci(pooled, iters=500, seed=1).as_list()
