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
