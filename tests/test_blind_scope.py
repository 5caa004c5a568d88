"""Blindness holds for the person across every endpoint and page (annotation.policies, "Blindness that
holds for the person").

A small team where people hold two roles: `eng_ann` (engineer + annotator) and `adj_ann` (adjudicator +
annotator) are in the pool of queue Q over answers of two runs, R and R2, whose items `ann_o` has
already labelled (so they are open, one label of two in). A judge was calibrated on a sample that holds
those answers, and an earlier queue Q0 settled one of them with two disagreeing labels. While the items
are open, nothing eng_ann or adj_ann can open carries ann_o's label or rationale, a harness score, a
final verdict, a judge verdict, or which run answered; once the items complete it all comes back. An
engineer in no pool sees everything as before; an adjudicator reads adjudication and queue statistics,
never runs, compares or judges.

(Past 400 lines on purpose: one world, every read path of every app checked against it in one place,
so a new endpoint that leaks shows up beside the ones that do not.)
"""

import json
import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Answer, QueueItem
from annotation.selectors.blind import blind_scope
from annotation.services.claims import queue_next
from annotation.services.labelling import item_adjudicate, label_submit
from annotation.services.queues import queue_create
from calibration.models import SampleItem
from calibration.services.calibration import calibration_start, pending_item_ids
from calibration.services.judges import judge_version_create
from tests.conftest import write_jsonl

R, R2 = "nightly-alpha", "nightly-beta"
SYSTEMS = {R: "sys-aardvark", R2: "sys-bluebird"}
OTHER = "OTHER-RATIONALE-7f3a"  # ann_o's rationales on Q's open items
Q0_WHY = "Q0-RATIONALE-c41d"  # the earlier queue's labels on one of the same answers
RECORD = "RECORD-SCORE-91e2"  # a harness aggregate carried in R's run record
N = 12


def _correct(run_id: str, i: int) -> bool:
    return i % 2 == 0 if run_id == R else i % 3 == 0


def _answer(run_id: str, i: int) -> str:
    contains = i % 3 != 0 if run_id == R else i % 4 != 0
    return f"The code is code {i:04d}." if contains else "I am not sure which code applies."


@pytest.fixture
def team(db, tmp_path, django_capture_on_commit_callbacks, make_user):
    from annotation.services.datasets import questions_import
    from annotation.services.label_import import labels_import
    from annotation.services.runs import run_import
    from calibration import tasks

    questions = [
        {
            "qid": f"q-{i:04d}",
            "question": f"what is the code of item {i}?",
            "stratum": ("policy_lookup", "numeric")[i % 2],
            "gold_doc_id": "doc:codes",
            "gold_chunk_id": f"doc:codes#{i:04d}",
            "gold_text": f"The code of item {i} is code {i:04d}.",
            "expected": f"code {i:04d}",
            "grading": "judge",
        }
        for i in range(N)
    ]
    version = questions_import(path=write_jsonl(tmp_path / "q.jsonl", questions), dataset_name="blindset")
    for run_id in (R, R2):
        record = {
            "run_id": run_id,
            "system": SYSTEMS[run_id],
            "dataset": "blindset",
            "dataset_hash": version.dataset_hash,
            "started_at": "2026-06-07T02:00:00Z",
        }
        if run_id == R:
            record["harness_score"] = RECORD
        rows = [record] + [
            {"qid": f"q-{i:04d}", "answer": _answer(run_id, i), "correct": _correct(run_id, i)} for i in range(N)
        ]
        run_import(path=write_jsonl(tmp_path / f"{run_id}.jsonl", rows))
    labels_import(
        path=write_jsonl(
            tmp_path / "labels.jsonl",
            [
                {
                    "run_id": run_id,
                    "qid": f"q-{i:04d}",
                    "annotator": who,
                    "verdict": "correct" if i % 2 == 0 else "incorrect",
                    "labelled_at": "2026-06-08T10:00:00Z",
                }
                for run_id in (R, R2)
                for i in range(N)
                for who in ("ann-a", "ann-b")
            ],
        ),
        create_users=True,
    )

    # A span judge calibrated on every labelled answer of both runs.
    judge = judge_version_create(judge_name="span-judge", backend="span")[0]
    with django_capture_on_commit_callbacks(execute=False):
        calibration, _ = calibration_start(judge_version_id=judge.pk, dataset_name="blindset", size=2 * N)
    pending = pending_item_ids(calibration)
    tasks.judge_chunk.apply(args=(calibration.pk, pending), throw=True)

    users = {
        name: make_user(name, *roles)
        for name, roles in {
            "eng_ann": ("engineer", "annotator"),
            "adj_ann": ("adjudicator", "annotator"),
            "ann_o": ("annotator",),
            "ann_p": ("annotator",),
            "ann_q": ("annotator",),
            "eng": ("engineer",),
            "adj": ("adjudicator",),
        }.items()
    }
    # Q0, earlier and complete: R's q-0000 settled by two disagreeing labels, waiting for an adjudicator.
    q0 = queue_create(
        name="earlier round", annotators=["ann_p", "ann_q"], overlap=2, seed=3, items=[{"run_id": R, "qid": "q-0000"}]
    )
    for name, verdict in (("ann_p", "correct"), ("ann_q", "incorrect")):
        claim = queue_next(queue=q0, annotator=users[name])
        label_submit(
            queue=q0, item_id=claim.item.pk, annotator=users[name], verdict=verdict, rationale=f"{Q0_WHY} by {name}"
        )
    # Q: R's q-0000 and R2's q-0001, each labelled by ann_o and open for the two-role people.
    q = queue_create(
        name="blind round",
        annotators=["ann_o", "eng_ann", "adj_ann"],
        overlap=2,
        seed=5,
        items=[{"run_id": R, "qid": "q-0000"}, {"run_id": R2, "qid": "q-0001"}],
    )
    while (claim := queue_next(queue=q, annotator=users["ann_o"])) is not None:
        label_submit(
            queue=q,
            item_id=claim.item.pk,
            annotator=users["ann_o"],
            verdict="incorrect",
            rationale=f"{OTHER} on {claim.item.answer.qid}",
        )
    users["eng_ann"].is_staff = True
    users["eng_ann"].save()
    users["eng_ann"].user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    return {"users": users, "q": q, "q0": q0, "judge": judge, "calibration": calibration}


def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get(user=user).key}")
    return client


def page(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def body(response) -> str:
    return b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()


def assert_hidden(text: str):
    """None of the secrets of the open items: ann_o's rationale, R's recorded score, R2's system beside a
    verdict. (Run names and systems may be listed; per-answer reads of them are refused.)"""
    assert OTHER not in text, text[:2000]
    assert RECORD not in text, text[:2000]


def reads(team) -> dict[str, tuple[str, str]]:
    """Every read that carries run, answer, label or verdict data: name -> (kind, url)."""
    q, q0, judge = team["q"].pk, team["q0"].pk, team["judge"].pk
    return {
        "answers": ("api", f"/api/runs/{R}/answers/"),
        "runs": ("api", "/api/runs/"),
        "run": ("api", f"/api/runs/{R}/"),
        "answers2": ("api", f"/api/runs/{R2}/answers/"),
        "export_queue": ("api", f"/api/labels/export/?queue={q}"),
        "export_q0": ("api", f"/api/labels/export/?queue={q0}"),
        "export_run": ("api", f"/api/labels/export/?run_id={R}"),
        "export_all": ("api", "/api/labels/export/"),
        "compare": ("api", f"/api/compare/?a={R}&b={R2}&iters=50"),
        "compare_question": ("api", f"/api/compare/question/?a={R}&b={R2}&qid=q-0000"),
        "failures": ("api", f"/api/runs/{R}/failures/"),
        "series": ("api", "/api/series/?dataset=blindset"),
        "history": ("api", "/api/datasets/blindset/history/"),
        "diff": ("api", f"/api/datasets/blindset/diff/?old=1&new=1&run_old={R}&run_new={R2}"),
        "planner": ("api", f"/api/planner/?a={R}&b={R2}&n=100"),
        "judge_versions": ("api", "/api/judge-versions/"),
        "judge_version": ("api", f"/api/judge-versions/{judge}/"),
        "gate": ("api", f"/api/judge-versions/{judge}/gate/"),
        "judge_disagreements": ("api", f"/api/judge-versions/{judge}/disagreements/"),
        "calibration_run": ("api", f"/api/calibration-runs/{team['calibration'].pk}/"),
        "stats_q": ("api", f"/api/queues/{q}/stats/"),
        "stats_q0": ("api", f"/api/queues/{q0}/stats/?iters=10"),
        "label_time_q": ("api", f"/api/queues/{q}/label-time/"),
        "label_time_q0": ("api", f"/api/queues/{q0}/label-time/"),
        "label_time_set": ("api", "/api/datasets/blindset/label-time/"),
        "queues": ("api", "/api/queues/"),
        "page_runs": ("page", "/runs/"),
        "page_run": ("page", f"/runs/{R}/"),
        "page_compare": ("page", f"/compare/?a={R}&b={R2}"),
        "page_compare_question": ("page", f"/compare/question/?a={R}&b={R2}&qid=q-0000"),
        "page_series": ("page", "/series/?dataset=blindset"),
        "page_history": ("page", "/datasets/blindset/history/"),
        "page_judges": ("page", "/judges/"),
        "page_judge_version": ("page", f"/judges/versions/{judge}/"),
        "page_stats_q0": ("page", f"/queues/{q0}/stats/"),
        "page_stats_q": ("page", f"/queues/{q}/stats/"),
        "page_adjudicate_q0": ("page", f"/queues/{q0}/adjudicate/"),
        "home": ("page", "/"),
    }


def fetch(team, user, name):
    kind, url = reads(team)[name]
    return (api(user) if kind == "api" else page(user)).get(url)


@pytest.mark.django_db
def test_the_two_role_engineer_learns_nothing_of_the_open_answers_anywhere(team):
    eng_ann = team["users"]["eng_ann"]
    refused = {
        "run",
        "answers",
        "answers2",
        "export_run",
        "compare",
        "compare_question",
        "failures",
        "diff",
        "planner",
        "page_run",
        "page_compare",
        "page_compare_question",
        "page_adjudicate_q0",
    }
    for name in reads(team):
        response = fetch(team, eng_ann, name)
        text = body(response)
        assert_hidden(text)
        if name in refused:
            assert response.status_code == 403, (name, response.status_code, text[:300])
        else:
            assert response.status_code == 200, (name, response.status_code, text[:300])
    refusal = api(eng_ann).get(f"/api/runs/{R}/answers/").json()
    message = (
        f"you are labelling answers of run '{R}' blind in queue 'blind round'; its results "
        "are hidden from you until those items are complete"
    )
    assert refusal == {"error": message, "problems": [], "detail": message}
    assert "you are labelling answers of run" in page(eng_ann).get(f"/runs/{R}/").content.decode()

    # The runs list names both runs (existence is no secret) but marks them blind and withholds the record.
    runs = {r["run_id"]: r for r in api(eng_ann).get("/api/runs/").json()["results"]}
    assert (runs[R]["blind"], runs[R]["record"], runs[R2]["blind"], runs[R2]["record"]) == (True, None, True, None)
    assert runs[R]["system"] == SYSTEMS[R]
    runs_page = page(eng_ann).get("/runs/").content.decode()
    assert f'href="/runs/{R}/"' not in runs_page and "blind</span>" in runs_page

    # Labels: nothing of either run, in any export.
    for name in ("export_queue", "export_q0", "export_all"):
        lines = [json.loads(line) for line in body(fetch(team, eng_ann, name)).splitlines()]
        assert [r for r in lines if r["run_id"] in (R, R2)] == []
    # Series and history list the runs without a score.
    series = api(eng_ann).get("/api/series/?dataset=blindset").json()
    points = [p for line in series["lines"] for seg in line["segments"] for p in seg["points"]]
    assert sorted((p["run_id"], p["score"], p["n"], p["blind"]) for p in points) == [
        (R, None, None, True),
        (R2, None, None, True),
    ]
    history = api(eng_ann).get("/api/datasets/blindset/history/").json()
    assert [(p["run_id"], p["score"], p["blind"]) for p in history["versions"][0]["runs"]] == [
        (R, None, True),
        (R2, None, True),
    ]
    # The gate keeps its status but none of the sample's figures; the page lists no disagreement.
    gate = api(eng_ann).get(f"/api/judge-versions/{team['judge'].pk}/gate/").json()
    assert gate["blind"] is True and gate["n"] == 2 * N
    assert (gate["kappa"], gate["raw_agreement"], gate["confusion"], gate["per_stratum"]) == (None, None, {}, {})
    assert api(eng_ann).get(f"/api/judge-versions/{team['judge'].pk}/").json()["gate"]["kappa"] is None
    version_page = page(eng_ann).get(f"/judges/versions/{team['judge'].pk}/").content.decode()
    assert 'data-testid="disagreement"' not in version_page and 'data-testid="blind"' in version_page
    # Q0's settled item is on an answer eng_ann grades blind in Q: its labels are not in Q0's statistics.
    stats = api(eng_ann).get(f"/api/queues/{team['q0'].pk}/stats/?iters=10").json()
    assert stats["agreement"]["disagreements"] == [] and stats["agreement"]["n"] == 0
    assert stats["blind_excluded"] == 1
    assert Q0_WHY not in page(eng_ann).get(f"/queues/{team['q0'].pk}/stats/").content.decode()
    # Time per label is timing only: the same counts and seconds as the operator's, and no verdict in them.
    from annotation.selectors.label_time import queue_label_time

    for queue in (team["q"], team["q0"]):
        timing = api(eng_ann).get(f"/api/queues/{queue.pk}/label-time/")
        assert timing.json() == queue_label_time(queue)
        assert not re.search(r"correct|verdict|rationale|nightly|sys-", timing.content.decode())


@pytest.mark.django_db
def test_the_admin_hides_the_blind_runs_from_staff_but_not_from_superusers(team):
    from django.contrib.auth import get_user_model

    eng_ann = team["users"]["eng_ann"]
    blind_answers = Answer.objects.filter(run__run_id__in=(R, R2))
    pages = [
        "annotation/answer",
        "annotation/humanlabel",
        "annotation/labelevent",
        "annotation/run",
        "annotation/queueitem",
        "annotation/assignment",
        "annotation/queuepaircount",
        "annotation/queuelabelseconds",
        "calibration/sampleitem",
        "calibration/verdict",
        "calibration/repeatverdict",
    ]
    from calibration.models import RepeatVerdict, Verdict

    for v in Verdict.objects.filter(item__answer__in=blind_answers)[:3]:
        RepeatVerdict.objects.create(run_id=v.run_id, item_id=v.item_id, repeat=2, verdict=v.verdict)
    assert RepeatVerdict.objects.count() == 3
    client = page(eng_ann)
    for path in pages:
        response = client.get(f"/admin/{path}/")
        assert response.status_code == 200, path
        listed = response.context["cl"].queryset
        assert listed.count() == 0, (path, list(listed))
        assert OTHER not in response.content.decode()
    hidden = blind_answers.get(run__run_id=R, qid="q-0000")
    assert client.get(f"/admin/annotation/answer/{hidden.pk}/change/").status_code == 302  # "does not exist"
    root = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")
    everything = page(root).get("/admin/annotation/answer/")
    assert everything.context["cl"].queryset.count() == 2 * N
    assert page(root).get("/admin/calibration/repeatverdict/").context["cl"].queryset.count() == 3
    from annotation.models import QueueLabelSeconds, QueuePairCount

    for path, model in (("queuepaircount", QueuePairCount), ("queuelabelseconds", QueueLabelSeconds)):
        listed = page(root).get(f"/admin/annotation/{path}/").context["cl"].queryset
        assert listed.count() == model.objects.count() > 0, path
    assert (
        page(root)
        .get("/admin/annotation/humanlabel/")
        .context["cl"]
        .queryset.filter(rationale__startswith=OTHER)
        .count()
        == 2
    )


@pytest.mark.django_db
def test_the_two_role_adjudicator_is_blind_too_and_kept_off_runs(team):
    adj_ann, q0 = team["users"]["adj_ann"], team["q0"]
    for name in (
        "runs",
        "run",
        "answers",
        "export_run",
        "compare",
        "compare_question",
        "failures",
        "gate",
        "judge_version",
        "judge_disagreements",
        "page_runs",
        "page_compare",
        "page_judges",
        "page_judge_version",
        "label_time_set",
    ):
        assert fetch(team, adj_ann, name).status_code == 403, name
    for name in (
        "stats_q",
        "stats_q0",
        "label_time_q",
        "label_time_q0",
        "page_stats_q",
        "page_stats_q0",
        "page_adjudicate_q0",
        "queues",
        "home",
    ):
        response = fetch(team, adj_ann, name)
        assert response.status_code == 200, name
        assert_hidden(body(response))
        assert Q0_WHY not in body(response), name
    assert "No disputed items left" in page(adj_ann).get(f"/queues/{q0.pk}/adjudicate/").content.decode()
    # Settling it by its key is refused as well, and nothing changes.
    item = QueueItem.objects.get(queue=q0)
    refused = api(adj_ann).post(
        f"/api/queues/{q0.pk}/items/{item.key}/adjudicate/", {"verdict": "correct", "reason": "peeked"}, format="json"
    )
    assert refused.status_code == 403
    item.refresh_from_db()
    assert item.status == "disputed" and item.answer.adjudications.count() == 0
    # Nor does the item view of Q0 show the labels.
    shown = api(adj_ann).get(f"/api/queues/{q0.pk}/items/{item.key}/").json()
    assert "labels" not in shown and Q0_WHY not in json.dumps(shown)


def _complete_q(team):
    """adj_ann gives the second label to both open items of Q: they complete, and blindness lifts."""
    q, adj_ann = team["q"], team["users"]["adj_ann"]
    while (claim := queue_next(queue=q, annotator=adj_ann)) is not None:
        label_submit(queue=q, item_id=claim.item.pk, annotator=adj_ann, verdict="correct", rationale="fine")
    assert not QueueItem.objects.filter(queue=q, status="open").exists()


@pytest.mark.django_db
def test_blindness_lifts_once_the_items_are_complete(team):
    eng_ann, adj_ann = team["users"]["eng_ann"], team["users"]["adj_ann"]
    _complete_q(team)
    answers = api(eng_ann).get(f"/api/runs/{R}/answers/")
    assert answers.status_code == 200
    q0000 = next(a for a in answers.json()["results"] if a["qid"] == "q-0000")
    assert q0000["correct"] is True and OTHER + " on q-0000" in [label["rationale"] for label in q0000["labels"]]
    assert api(eng_ann).get(f"/api/compare/?a={R}&b={R2}&iters=50").status_code == 200
    assert OTHER in body(api(eng_ann).get(f"/api/labels/export/?queue={team['q'].pk}"))
    assert RECORD in api(eng_ann).get("/api/runs/").content.decode()
    assert api(eng_ann).get(f"/api/judge-versions/{team['judge'].pk}/gate/").json()["kappa"] is not None
    assert page(eng_ann).get("/admin/annotation/answer/").context["cl"].queryset.count() == 2 * N
    stats = api(adj_ann).get(f"/api/queues/{team['q0'].pk}/stats/?iters=10").json()
    assert [d["qid"] for d in stats["agreement"]["disagreements"]] == ["q-0000"] and stats["blind_excluded"] == 0
    # adj_ann labelled that answer in Q, so settling Q0's item is another adjudicator's (policies.can_adjudicate).


@pytest.mark.django_db
def test_an_engineer_in_no_pool_sees_everything_as_before(team):
    eng = team["users"]["eng"]
    for name in reads(team):
        if name in ("page_adjudicate_q0",):
            continue
        response = fetch(team, eng, name)
        assert response.status_code == 200, (name, response.status_code, body(response)[:300])
    runs = {r["run_id"]: r for r in api(eng).get("/api/runs/").json()["results"]}
    assert runs[R]["blind"] is False and runs[R]["record"]["harness_score"] == RECORD
    answers = api(eng).get(f"/api/runs/{R}/answers/").json()["results"]
    assert [a["correct"] for a in answers] == [_correct(R, i) for i in range(N)]
    gate = api(eng).get(f"/api/judge-versions/{team['judge'].pk}/gate/").json()
    assert gate["blind"] is False and gate["kappa"] is not None and gate["confusion"]
    version_page = page(eng).get(f"/judges/versions/{team['judge'].pk}/").content.decode()
    assert version_page.count('data-testid="disagreement"') > 0
    compare = api(eng).get(f"/api/compare/?a={R}&b={R2}&iters=50").json()
    assert compare["n"] == N
    stats = api(eng).get(f"/api/queues/{team['q0'].pk}/stats/?iters=10").json()
    assert [d["qid"] for d in stats["agreement"]["disagreements"]] == ["q-0000"]
    lines = body(api(eng).get(f"/api/labels/export/?run_id={R}")).splitlines()
    assert len(lines) == 2 * N + 3  # ann-a and ann-b on every answer, Q0's two labels, ann_o's one
    points = [
        p
        for line in api(eng).get("/api/series/?dataset=blindset").json()["lines"]
        for seg in line["segments"]
        for p in seg["points"]
    ]
    assert sorted((p["run_id"], p["blind"], p["n"]) for p in points) == [(R, False, N), (R2, False, N)]


@pytest.mark.django_db
def test_other_answers_of_a_blind_run_are_hidden_where_the_run_is_shown(
    team, tmp_path, django_capture_on_commit_callbacks
):
    """Absence and subtraction: eng_ann labels R's q-0000 blind, so R's other answers vanish from the
    judge's disagreement list too, even on a sample that does not hold q-0000 itself."""
    from calibration import tasks

    eng_ann, eng = team["users"]["eng_ann"], team["users"]["eng"]
    blind_answer = Answer.objects.get(run__run_id=R, qid="q-0000")
    judge = judge_version_create(judge_name="narrow-judge", backend="span")[0]
    with django_capture_on_commit_callbacks(execute=False):
        run, _ = calibration_start(judge_version_id=judge.pk, dataset_name="blindset", size=2 * N)
    # Take q-0000 (and R2's q-0001) out of this sample, as if it had been drawn without them.
    SampleItem.objects.filter(sample=run.sample, answer__qid__in=("q-0000", "q-0001")).delete()
    run.total = run.sample.items.count()
    run.save(update_fields=["total"])
    tasks.judge_chunk.apply(args=(run.pk, pending_item_ids(run)), throw=True)
    assert not SampleItem.objects.filter(sample=run.sample, answer=blind_answer).exists()

    mine = page(eng_ann).get(f"/judges/versions/{judge.pk}/").content.decode()
    theirs = page(eng).get(f"/judges/versions/{judge.pk}/").content.decode()
    rows = re.compile(r'<tr data-testid="disagreement">.*?</tr>', re.S)
    assert [r for r in rows.findall(theirs) if R in r or R2 in r]  # the engineer in no pool sees them
    assert [r for r in rows.findall(mine) if R in r or R2 in r] == []
    listed = api(eng_ann).get(f"/api/judge-versions/{judge.pk}/disagreements/").json()["disagreements"]
    assert [r for r in listed if r["run_id"] in (R, R2)] == []
    assert [
        r
        for r in api(eng).get(f"/api/judge-versions/{judge.pk}/disagreements/").json()["disagreements"]
        if r["run_id"] in (R, R2)
    ]
    gate = api(eng_ann).get(f"/api/judge-versions/{judge.pk}/gate/").json()
    assert gate["blind"] is False and gate["kappa"] is not None  # the sample holds no blind answer


@pytest.mark.django_db
def test_an_adjudicator_only_user_reads_adjudication_and_statistics_not_runs_or_judges(team):
    adj = team["users"]["adj"]
    for name in (
        "runs",
        "run",
        "answers",
        "export_run",
        "export_all",
        "compare",
        "compare_question",
        "failures",
        "series",
        "history",
        "diff",
        "planner",
        "judge_versions",
        "judge_version",
        "gate",
        "judge_disagreements",
        "calibration_run",
        "page_runs",
        "page_run",
        "page_compare",
        "page_series",
        "page_history",
        "page_judges",
        "page_judge_version",
    ):
        assert fetch(team, adj, name).status_code == 403, name
    for name in ("stats_q", "stats_q0", "page_stats_q0", "page_adjudicate_q0", "queues", "home"):
        assert fetch(team, adj, name).status_code == 200, name
    assert Q0_WHY in page(adj).get(f"/queues/{team['q0'].pk}/adjudicate/").content.decode()
    home = page(adj).get("/").content.decode()
    for link in ('href="/runs/"', 'href="/judges/"', 'href="/compare/"', R):
        assert link not in home, link
    item = QueueItem.objects.get(queue=team["q0"])
    assert (
        item_adjudicate(
            queue=team["q0"], item_id=item.pk, adjudicator=adj, verdict="incorrect", reason="not the code"
        ).verdict
        == "incorrect"
    )


@pytest.mark.django_db
def test_the_prompt_preview_shows_no_answer_of_a_run_the_engineer_labels_blind(team):
    data = {"dataset": "blindset", "prompt_template": "$answer", "backend": "openai"}
    blind = page(team["users"]["eng_ann"]).post("/judges/new/preview/", data).content.decode()
    named = page(team["users"]["eng_ann"]).post("/judges/new/preview/", {**data, "qid": "q-0000"}).content.decode()
    seen = page(team["users"]["eng"]).post("/judges/new/preview/", data).content.decode()

    for text in (blind, named):
        assert 'data-testid="preview-none"' in text and 'data-testid="preview-user"' not in text
        assert R not in text and R2 not in text and "code applies" not in text and "The code is" not in text
        assert_hidden(text)
    assert 'data-testid="preview-user"' in seen and "q-0000" in seen


@pytest.mark.django_db
def test_figures_kept_for_an_engineer_who_sees_all_are_not_served_to_a_blind_one(team):
    from calibration.selectors.diagnostics import length_bias
    from calibration.selectors.gates import latest_measurement

    url = f"/judges/versions/{team['judge'].pk}/"
    seen = page(team["users"]["eng"]).get(url).content.decode()  # works the length bias out, and keeps it
    assert 'data-testid="ceiling"' in seen and "<td>Q1</td>" in seen
    measurement = latest_measurement(team["judge"])
    assert measurement is not None
    assert length_bias(measurement)  # the kept figure
    blind = page(team["users"]["eng_ann"]).get(url).content.decode()
    assert 'data-testid="blind"' in blind
    assert "<td>Q1</td>" not in blind and 'data-testid="ceiling"' not in blind
    assert length_bias(measurement, scope=blind_scope(team["users"]["eng_ann"])) == []


TONE = "TONE-SECRET-cold"  # ann_o's criterion value on the open items of the criteria queue


def test_criterion_values_of_open_items_stay_hidden_on_every_criterion_read(team):
    """A queue grading a criterion beside the verdict: while its items are open, ann_o's value on them is in
    no read of the two-role people: not in the queue's payloads or statistics, not in exports, not in the
    criterion's agreement, failures or series (the runs' results are refused or blind as before)."""
    from annotation.services.criteria import criterion_set

    users = team["users"]
    criterion_set(
        dataset_name="blindset", name="tone", kind="categorical", values=["plain", TONE], pass_rule="== plain"
    )
    qc = queue_create(
        name="tone round",
        annotators=["ann_o", "eng_ann", "adj_ann"],
        overlap=2,
        seed=9,
        items=[{"run_id": R, "qid": "q-0002"}, {"run_id": R2, "qid": "q-0003"}],
        criteria=["tone"],
    )
    while (claim := queue_next(queue=qc, annotator=users["ann_o"])) is not None:
        label_submit(
            queue=qc, item_id=claim.item.pk, annotator=users["ann_o"], verdict="correct", values={"tone": TONE}
        )
    eng_ann, adj_ann = users["eng_ann"], users["adj_ann"]
    reads_of = {
        "agreement": (f"/api/runs/{R}/criteria/tone/agreement/", 403),
        "failures": (f"/api/runs/{R}/failures/?criterion=tone", 403),
        "compare": (f"/api/compare/?a={R}&b={R2}&iters=50", 403),
        "series": ("/api/series/?dataset=blindset&criterion=tone", 200),
        "export": (f"/api/labels/export/?queue={qc.pk}", 200),
        "export_all": ("/api/labels/export/", 200),
        "stats": (f"/api/queues/{qc.pk}/stats/?iters=10", 200),
        "criteria": ("/api/datasets/blindset/criteria/", 200),
    }
    for name, (url, status) in reads_of.items():
        response = api(eng_ann).get(url)
        text = body(response)
        assert (name, response.status_code) == (name, status), text[:300]
        # The scale itself names the value (it is what one chooses from); a value given to an answer is not.
        given = text.replace(f'["plain","{TONE}"]', "").replace(f'["plain", "{TONE}"]', "")
        assert TONE not in given or name == "criteria", (name, text[:500])
    # The definition names the value (it is the scale); what nobody may learn is who gave it to which answer.
    assert TONE in api(eng_ann).get("/api/datasets/blindset/criteria/").content.decode()
    series = api(eng_ann).get("/api/series/?dataset=blindset&criterion=tone").json()
    assert {p["blind"] for line in series["lines"] for seg in line["segments"] for p in seg["points"]} == {True}
    stats = api(eng_ann).get(f"/api/queues/{qc.pk}/stats/?iters=10").json()
    assert stats["criteria"]["tone"]["n"] == 0
    # The two-role people labelling the open items see the scale to choose from, never ann_o's value.
    for user in (eng_ann, adj_ann):
        nxt = api(user).post(f"/api/queues/{qc.pk}/next/")
        assert nxt.status_code == 200
        item = api(user).get(f"/api/queues/{qc.pk}/items/{nxt.json()['item_id']}/")
        for response in (nxt, item):
            assert '"labels"' not in response.content.decode() and "ann_o" not in response.content.decode()
        assert [c["values"] for c in nxt.json()["criteria"]] == [["plain", TONE]]
        page_html = page(user).get(f"/queues/{qc.pk}/label/").content.decode()
        assert (
            "ann_o" not in page_html and "checked" not in page_html.split("data-criteria", 1)[1].split("</div>", 1)[0]
        )
    assert api(adj_ann).get(f"/api/queues/{qc.pk}/disputes/").json() == []


def test_a_published_figure_of_a_blind_run_is_neither_served_nor_recorded_by_a_blind_engineer(team):
    from annotation.models import Correction, PublishedFigure
    from comparisons.services.published import figure_publish

    fig = figure_publish(run_id=R, shown_to="board deck")  # the operator's figure: R's score
    eng, eng_ann = team["users"]["eng"], team["users"]["eng_ann"]
    assert [f["run_id"] for f in api(eng).get("/api/published/").json()["figures"]] == [R]
    assert api(eng_ann).get("/api/published/").json() == {"figures": []}
    assert api(eng_ann).get("/api/series/?dataset=blindset").json()["published"] == []
    assert "board deck" not in page(eng_ann).get("/series/?dataset=blindset").content.decode()
    refused = api(eng_ann).post("/api/published/", {"run_id": R, "shown_to": "leak"}, format="json")
    assert refused.status_code == 403 and PublishedFigure.objects.count() == 1
    assert page(eng_ann).post(f"/runs/{R}/published/", {"shown_to": "leak"}).status_code == 403
    assert PublishedFigure.objects.count() == 1
    corrected = api(eng_ann).post(f"/api/published/{fig['id']}/correct/", {"cause": "x"}, format="json")
    assert corrected.status_code == 403 and str(fig["score"]) not in corrected.content.decode()
    assert page(eng_ann).post(f"/published/{fig['id']}/correct/", {}).status_code == 403
    assert Correction.objects.count() == 0
