"""The judge against each annotator beside that annotator against the others."""

from typing import cast

import pytest
from django.contrib.auth.models import User

from annotation.models import HumanLabel
from calibration.models import JudgeVersion, Measurement
from calibration.selectors.per_annotator import per_annotator
from evalstats import bootstrap_kappa_ci
from tests.calibration.selectors.test_judge_compare import measured, sample_of
from tests.factories import JudgeFactory, JudgeVersionFactory, UserFactory

pytestmark = pytest.mark.django_db

C, X = "correct", "incorrect"
ANN1 = [C, C, C, C, X, X, X, X]
ANN2 = [C, C, C, X, X, X, X, C]


def labelled_sample():
    judge = JudgeFactory()
    version = cast(JudgeVersion, JudgeVersionFactory(judge=judge))
    sample, items = sample_of(judge, ANN1)
    for name, labels in (("ann1", ANN1), ("ann2", ANN2)):
        user = cast(User, UserFactory(username=name))
        for item, label in zip(items, labels, strict=True):
            HumanLabel.objects.create(
                answer=item.answer, annotator=user, verdict=label, labelled_at=item.answer.run.started_at
            )
    # The judge says what ann1 says, except an unreadable output on the last item.
    run = measured(version, sample, items, [*ANN1[:-1], "invalid"])
    return Measurement.objects.get(run=run)


def test_hand_worked_kappas_per_annotator():
    out = per_annotator(labelled_sample())
    assert out is not None
    assert list(out) == ["ann1", "ann2"]
    # ann1 against the judge: 7 agree, the invalid output counts as "correct" against ann1's "incorrect":
    # table [[4, 0], [1, 3]], po 7/8, pe (4*5 + 4*3) / 64 = 0.5, kappa (0.875 - 0.5) / 0.5 = 0.75.
    assert out["ann1"]["n"] == 8
    assert out["ann1"]["kappa_judge"] == pytest.approx(0.75)
    # ann1 against ann2: [[3, 1], [1, 3]], po 0.75, pe 0.5, kappa 0.5; the same pairs seen from ann2.
    assert out["ann1"]["kappa_human"] == pytest.approx(0.5)
    assert out["ann2"]["kappa_human"] == pytest.approx(0.5)
    assert out["ann1"]["n_human"] == out["ann2"]["n_human"] == 8
    # ann2 against the judge: ann2 c,c,c,x,x,x,x,c; judge c,c,c,c,x,x,x,(invalid = "incorrect" against "correct"):
    # [[3, 1], [1, 3]], kappa 0.5.
    assert out["ann2"]["kappa_judge"] == pytest.approx(0.5)
    assert out["ann2"]["kappa_judge_ci95"] == bootstrap_kappa_ci([[3, 1], [1, 3]], iters=2000, seed=4).as_list()


def test_unmeasured_has_none():
    assert per_annotator(None) is None


def test_a_viewer_labelling_a_sample_answer_blind_sees_nothing():
    from annotation.models import QueueItem
    from annotation.selectors.blind import blind_scope
    from tests.factories import QueueItemFactory, QueueMemberFactory

    m = labelled_sample()
    member = QueueMemberFactory()
    QueueItemFactory(queue=member.queue, answer=m.run.sample.items.first().answer, status=QueueItem.OPEN)
    assert per_annotator(m, scope=blind_scope(member.user)) is None
    assert per_annotator(m, scope=blind_scope(UserFactory())) is not None


def test_version_page_shows_the_table(client, make_user):
    m = labelled_sample()
    client.force_login(make_user("eng-page", "engineer"))
    page = client.get(f"/judges/versions/{m.judge_version_id}/").content.decode()
    assert 'data-testid="per-annotator"' in page
    assert "<td>ann1</td><td>8</td>" in page


def test_three_annotators_with_gaps_match_the_pairs_counted_one_by_one():
    """Three annotators, one of whom skipped items, and a judge with an error and an invalid output: each
    annotator's two tables are those of the pairs listed one by one (item by item, every other annotator)."""
    import random

    from evalstats import agreement_from_counts

    rng = random.Random(7)
    judge = JudgeFactory()
    version = cast(JudgeVersion, JudgeVersionFactory(judge=judge))
    truth = [rng.choice([C, X]) for _ in range(30)]
    sample, items = sample_of(judge, truth)
    labels: dict[str, list[str | None]] = {
        "amy": [t if rng.random() < 0.85 else (X if t == C else C) for t in truth],
        "bo": [t if rng.random() < 0.7 else (X if t == C else C) for t in truth],
        "cy": [rng.choice([C, X]) if k % 3 else None for k in range(30)],  # skipped a third of the items
    }
    for name, row in labels.items():
        user = cast(User, UserFactory(username=name))
        for item, label in zip(items, row, strict=True):
            if label is not None:
                HumanLabel.objects.create(
                    answer=item.answer, annotator=user, verdict=label, labelled_at=item.answer.run.started_at
                )
    verdicts = [t if k % 7 else "error" for k, t in enumerate(truth)]
    verdicts[4] = "invalid"
    m = Measurement.objects.get(run=measured(version, sample, items, verdicts))

    out = per_annotator(m)
    assert out is not None and list(out) == ["amy", "bo", "cy"]
    index = {C: 0, X: 1}
    seed = m.run.sample.seed
    for who, row in labels.items():
        judge_table, human_table = [[0, 0], [0, 0]], [[0, 0], [0, 0]]
        for k, label in enumerate(row):
            if label is None:
                continue
            said = verdicts[k] if verdicts[k] in index else (X if label == C else C)
            judge_table[index[label]][index[said]] += 1
            for other, other_row in labels.items():
                their = other_row[k]
                if other != who and their is not None:
                    human_table[index[label]][index[their]] += 1
        got = out[who]
        assert got["n"] == sum(map(sum, judge_table)) and got["n_human"] == sum(map(sum, human_table))
        assert got["kappa_judge"] == agreement_from_counts(judge_table, [C, X], positive=C).kappa
        assert got["kappa_human"] == agreement_from_counts(human_table, [C, X], positive=C).kappa
        assert got["kappa_human_ci95"] == bootstrap_kappa_ci(human_table, iters=2000, seed=seed).as_list()
    assert out["cy"]["n"] == 20 and out["amy"]["n_human"] == 30 + 20
