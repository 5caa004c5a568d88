"""Calibration samples: a seeded stratified draw of human-labelled answers, stored and reused."""

from __future__ import annotations

from django.db import transaction

from annotation.models import Answer, Dataset, VersionEntry
from annotation.selectors.datasets import latest_version
from annotation.selectors.labels import held_out_answer_ids
from calibration.models import CalibrationSample, Judge, SampleItem
from evalapp.errors import Problem, ServiceError
from evalstats import sampling


def _labelled_population(dataset: Dataset) -> dict[str, list[tuple[str, str, int]]]:
    """stratum -> [(run_id, qid, answer pk)] of the dataset's answers that carry a final human label.

    A stratum is the one of the question in the answer's own run's dataset version. Answers in a
    relabel audit flagged as interpretation drift stay out until the audit is resolved.
    """
    answers = list(
        Answer.objects.filter(run__dataset=dataset)
        .exclude(final_verdict="")
        .exclude(pk__in=held_out_answer_ids())
        .values_list("pk", "run__run_id", "qid", "run__dataset_version_id")
    )
    latest = latest_version(dataset)
    version_ids = {v or (latest.pk if latest else None) for *_, v in answers} - {None}
    strata = {}
    for version_id, qid, stratum in (
        VersionEntry.objects.filter(version_id__in=version_ids)
        .values_list("version_id", "qid", "stratum")
        .iterator(chunk_size=10_000)
    ):
        strata[(version_id, qid)] = stratum
    population: dict[str, list] = {}
    for pk, run_id, qid, version_id in answers:
        stratum = strata.get((version_id or (latest.pk if latest else None), qid), "(unknown)")
        population.setdefault(stratum, []).append((run_id, qid, pk))
    return population


@transaction.atomic
def sample_draw(*, judge: Judge, dataset: Dataset, size: int, seed: int = 0, floor: int = 1) -> CalibrationSample:
    """Draw and store a stratified sample of labelled answers for a judge (see evalstats.sampling)."""
    if size < 1:
        raise ServiceError("the sample size must be at least 1", [Problem("must be at least 1", field="sample")])
    population = _labelled_population(dataset)
    available = {s: len(v) for s, v in population.items()}
    if not available:
        raise ServiceError(
            f"dataset {dataset.name!r} has no answers with a final human label to calibrate on", code=3, status=409
        )
    budget = dict(dataset.strata_budget or {})
    allocation = sampling.allocate(size, available, budget or None, floor=floor)
    picked = sampling.draw(population, allocation, seed=seed)
    latest = latest_version(dataset)
    sample = CalibrationSample.objects.create(
        judge=judge,
        dataset=dataset,
        dataset_hash=latest.dataset_hash if latest else "",
        size=size,
        seed=seed,
        allocation=allocation,
        available=available,
        budget=budget,
    )
    SampleItem.objects.bulk_create(
        [
            SampleItem(sample=sample, answer_id=pk, stratum=stratum, position=i)
            for i, (stratum, (_run_id, _qid, pk)) in enumerate(picked)
        ],
        batch_size=2000,
    )
    return sample


@transaction.atomic
def sample_for(*, judge: Judge, dataset: Dataset, size: int, seed: int, resample: bool = False) -> CalibrationSample:
    """The judge's stored sample for (dataset, size, seed), reused across its versions; drawn when missing."""
    if not resample:
        found = CalibrationSample.objects.filter(judge=judge, dataset=dataset, size=size, seed=seed).first()
        if found is not None:
            return found
    return sample_draw(judge=judge, dataset=dataset, size=size, seed=seed)
