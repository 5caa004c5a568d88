"""Pages and API lists at size: server time and SQL statements per page, against a limit measured alike.

Builds (in bulk, setup is not what is measured) one world on SQLite (var/bench/pages.sqlite3) and, unless
--no-postgres, on PostgreSQL (database `evalapp_pages_bench`, dropped and made anew):

  calibration   a dataset of --calibration questions, a run answering all of them with a final human label,
                a calibration run over all of them (judge verdicts: 1 in 5 disagrees) closed by the real
                calibration_close (so the measurement is what a calibration stores)
  queue         a labelling queue of --queue items, overlap 2, every item complete with two labels
                (1 in 6 disagreeing, half of those adjudicated)
  runs          --runs system runs of 200 harness-scored answers each on a dataset with two versions,
                for the series and the dataset history

Then each page and API call is fetched through Django's test Client as an engineer (server time: routing,
auth, the selectors, rendering; no network), median of --repeat fetches, with the SQL statements counted.
The limit beside each is the time of a trivial page (the API root, `/api/`) plus the time of the page's own SQL run
bare (every statement the page issued, re-executed through the same connection cursor); the ratio is
page / limit. Target: the judge version page and queue statistics under 300 ms. The queue statistics also
print `floor x`: their time over one grouped scan of the queue's 200,000 labels (the live computation's floor; they
read the kept pair counts and label seconds instead, built once from the bulk rows as the migration builds them), and
are fetched again by an engineer blind to 1,000 of the queue's answers (`queue stats page, blind`).

    .venv/bin/python bench/pages_bench.py [--calibration 10000] [--queue 100000] [--runs 500]
        [--repeat 5] [--no-postgres] [--only sqlite|postgres] [--reuse] [--pages judge,queue]

(PAGES_BENCH_DATABASE_URL names another PostgreSQL database; --reuse measures the last build again.)
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get("PAGES_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/evalapp_pages_bench")
STRATA = ["policy_lookup", "how_to", "no_answer", "comparison"]
WHEN = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
BATCH = 5000


def setup_django(url: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalapp.settings.base"
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    os.environ.setdefault("EVALAPP_VAR_DIR", str(ROOT / "var" / "bench" / "pages-var"))
    # Production settings (DEBUG off) redirect plain HTTP to HTTPS, and the test Client speaks plain HTTP: without
    # this every page measured would be the redirect.
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]


def fresh_postgres(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _version(dataset, number: int, n: int, prefix: str, parent=None):
    """A dataset version of n questions (qid prefix-000000…), written in bulk."""
    from annotation.models import DatasetVersion, Example, VersionEntry

    version = DatasetVersion.objects.create(
        dataset=dataset,
        number=number,
        dataset_hash="sha256:" + hashlib.sha256(f"{dataset.name}{number}".encode()).hexdigest(),
        parent=parent,
        source="import",
        examples=n,
        added=n,
        removed=0,
        modified=0,
        unchanged=0,
    )
    for start in range(0, n, BATCH):
        examples, entries = [], []
        for i in range(start, min(n, start + BATCH)):
            record = {
                "qid": f"{prefix}-{i:06d}",
                "question": f"How long does plan {i} last?",
                "stratum": STRATA[i % len(STRATA)],
                "gold_text": f"Plan {i} lasts {i} days.",
                "expected": f"{i} days",
                "grading": "rubric",
            }
            text = json.dumps(record, sort_keys=True, separators=(",", ":"))
            sha = hashlib.sha256(text.encode()).hexdigest()
            examples.append(Example(sha256=sha, qid=record["qid"], stratum=record["stratum"], canonical=text))
            entries.append(VersionEntry(version=version, qid=record["qid"], example_id=sha, stratum=record["stratum"]))
        Example.objects.bulk_create(examples, ignore_conflicts=True)
        VersionEntry.objects.bulk_create(entries)
    return version


def _users():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user_model = get_user_model()
    out = {}
    for name, role in (("engineer", "engineer"), ("ann1", "annotator"), ("ann2", "annotator")):
        user, _ = user_model.objects.get_or_create(username=name)
        user.groups.add(Group.objects.get_or_create(name=role)[0])
        out[name] = user
    return out


def build_calibration(n: int, users) -> int:
    """A calibration of n items closed by calibration_close; returns the judge version's id."""
    from annotation.models import Answer, Dataset, HumanLabel, Run
    from calibration.models import CalibrationRun, CalibrationSample, Judge, JudgeVersion, SampleItem, Verdict
    from calibration.services.calibration import calibration_close

    dataset = Dataset.objects.create(name="calib")
    version = _version(dataset, 1, n, "c")
    run = Run.objects.create(
        run_id="calib-run", system="rag", dataset=dataset, dataset_version=version, dataset_hash=version.dataset_hash
    )
    for start in range(0, n, BATCH):
        Answer.objects.bulk_create(
            [
                Answer(
                    run=run,
                    qid=f"c-{i:06d}",
                    answer="answer " + "x" * (i % 300),
                    final_verdict="correct" if i % 3 else "incorrect",
                    final_source="agreement",
                    final_changed_at=WHEN,
                )
                for i in range(start, min(n, start + BATCH))
            ]
        )
    answers = list(Answer.objects.filter(run=run).order_by("qid").values_list("pk", "qid", "final_verdict"))
    for start in range(0, n, BATCH):
        HumanLabel.objects.bulk_create(
            [
                HumanLabel(answer_id=pk, annotator=users[u], verdict=v, labelled_at=WHEN)
                for pk, _q, v in answers[start : start + BATCH]
                for u in ("ann1", "ann2")
            ]
        )
    judge = Judge.objects.create(name="bench-judge")
    jv = JudgeVersion.objects.create(judge=judge, number=1, backend="replay", config_hash="sha256:" + "1" * 64)
    counts: dict = {}
    for i in range(n):
        counts[STRATA[i % len(STRATA)]] = counts.get(STRATA[i % len(STRATA)], 0) + 1
    sample = CalibrationSample.objects.create(
        judge=judge, dataset=dataset, dataset_hash=version.dataset_hash, size=n, allocation=counts, available=counts
    )
    for start in range(0, n, BATCH):
        SampleItem.objects.bulk_create(
            [
                SampleItem(sample=sample, answer_id=answers[i][0], stratum=STRATA[i % len(STRATA)], position=i)
                for i in range(start, min(n, start + BATCH))
            ]
        )
    crun = CalibrationRun.objects.create(judge_version=jv, sample=sample, status="running", total=n)
    items = list(SampleItem.objects.filter(sample=sample).order_by("position").values_list("pk", flat=True))
    for start in range(0, n, BATCH):
        rows = []
        for i in range(start, min(n, start + BATCH)):
            human = answers[i][2]
            flip = i % 5 == 0
            judge_says = ("incorrect" if human == "correct" else "correct") if flip else human
            rows.append(
                Verdict(run=crun, item_id=items[i], verdict=judge_says, raw_output=f"VERDICT: {judge_says}", reason="")
            )
        Verdict.objects.bulk_create(rows)
    calibration_close(run_id=crun.pk)
    return jv.pk


def build_queue(n: int, users) -> int:
    """A queue of n complete items, two labels each; returns its id."""
    from annotation.models import Answer, Assignment, Dataset, HumanLabel, Queue, QueueItem, QueueMember, Run

    dataset = Dataset.objects.create(name="queued")
    version = _version(dataset, 1, n, "k")
    run = Run.objects.create(
        run_id="queued-run", system="rag", dataset=dataset, dataset_version=version, dataset_hash=version.dataset_hash
    )
    for start in range(0, n, BATCH):
        Answer.objects.bulk_create(
            [
                Answer(
                    run=run,
                    qid=f"k-{i:06d}",
                    answer=f"answer {i}",
                    final_verdict="" if (i % 6 == 0 and i % 12) else ("incorrect" if i % 4 == 0 else "correct"),
                )
                for i in range(start, min(n, start + BATCH))
            ]
        )
    queue = Queue.objects.create(name="bench queue", overlap=2, size=n)
    for u in ("ann1", "ann2"):
        QueueMember.objects.create(queue=queue, user=users[u])
    answers = list(Answer.objects.filter(run=run).order_by("qid").values_list("pk", flat=True))
    for start in range(0, n, BATCH):
        QueueItem.objects.bulk_create(
            [
                QueueItem(
                    queue=queue,
                    key=f"item{i:08d}",
                    answer_id=answers[i],
                    position=i,
                    stratum=STRATA[i % len(STRATA)],
                    status=(QueueItem.ADJUDICATED if i % 12 == 0 else QueueItem.DISPUTED)
                    if i % 6 == 0
                    else QueueItem.AGREED,
                    taken=2,
                    done=2,
                    completed_at=WHEN,
                )
                for i in range(start, min(n, start + BATCH))
            ]
        )
    items = list(QueueItem.objects.filter(queue=queue).order_by("position").values_list("pk", "answer_id"))
    for start in range(0, n, BATCH):
        part = list(enumerate(items[start : start + BATCH], start))
        Assignment.objects.bulk_create(
            [
                Assignment(
                    queue=queue,
                    item_id=item_id,
                    annotator=users[u],
                    state=Assignment.DONE,
                    claimed_at=WHEN,
                    lease_expires_at=WHEN,
                    submitted_at=WHEN + timedelta(seconds=k),
                )
                for i, (item_id, _a) in part
                for k, u in enumerate(("ann1", "ann2"))
            ]
        )
        HumanLabel.objects.bulk_create(
            [
                HumanLabel(
                    answer_id=answer_id,
                    annotator=users[u],
                    verdict=("incorrect" if (i % 4 == 0) != (i % 6 == 0 and k == 1) else "correct"),
                    source="queue",
                    labelled_at=WHEN + timedelta(seconds=k),
                )
                for i, (_item, answer_id) in part
                for k, u in enumerate(("ann1", "ann2"))
            ]
        )
    return queue.pk


def blind_viewer(queue_id: int, n: int = 1000):
    """An engineer who also labels, in the pool of a second queue whose n open items hold answers of the
    bench queue's first n items: the statistics must leave those n out for them (the blind path). Made once
    in a world (--reuse keeps it)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from annotation.models import Queue, QueueItem, QueueMember

    user, _ = get_user_model().objects.get_or_create(username="blind-engineer")
    for role in ("engineer", "annotator"):
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    if not Queue.objects.filter(name="bench blind queue").exists():
        blind = Queue.objects.create(name="bench blind queue", overlap=2, size=n, counts_kept=True)
        QueueMember.objects.create(queue=blind, user=user)
        answers = QueueItem.objects.filter(queue_id=queue_id).order_by("position").values_list("answer_id", flat=True)
        QueueItem.objects.bulk_create(
            QueueItem(queue=blind, key=f"blind{i:08d}", answer_id=a, position=i, status=QueueItem.OPEN)
            for i, a in enumerate(answers[:n])
        )
    return user


def build_runs(n_runs: int, per_run: int = 200) -> None:
    """n_runs harness-scored runs of two systems over two versions of the dataset `history`."""
    from annotation.models import Answer, Dataset, Run

    dataset = Dataset.objects.create(name="history")
    v1 = _version(dataset, 1, per_run, "h")
    v2 = _version(dataset, 2, per_run, "h", parent=v1)
    answers: list = []
    for r in range(n_runs):
        v = v1 if r < n_runs // 2 else v2
        run = Run.objects.create(
            run_id=f"hist-{r:04d}",
            system=f"sys-{r % 2}",
            dataset=dataset,
            dataset_version=v,
            dataset_hash=v.dataset_hash,
            evaluator_config_hash="sha256:eval",
            started_at=WHEN + timedelta(hours=r),
        )
        answers.extend(
            Answer(run=run, qid=f"h-{i:06d}", answer=f"a {i}", correct=bool((i + r) % 3)) for i in range(per_run)
        )
        if len(answers) >= BATCH:
            Answer.objects.bulk_create(answers)
            answers = []
    Answer.objects.bulk_create(answers)


def build(args) -> dict:
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    t = time.perf_counter()
    users = _users()
    ids = {
        "version": build_calibration(args.calibration, users),
        "queue": build_queue(args.queue, users),
    }
    build_runs(args.runs)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"  setup (bulk rows)                     {time.perf_counter() - t:7.1f} s", flush=True)
    keep_counts(ids["queue"])
    return ids


def keep_counts(queue_id: int) -> None:
    """The bulk rows went around the services: count the queue's pairs and label seconds once from its labels
    (what the migration does for the queues a deployment already has, and `queue_counts --repair`)."""
    from annotation.models import Queue
    from annotation.services.queue_counts import queue_counts_check

    if Queue.objects.filter(pk=queue_id, counts_kept=True).exists():
        return
    t = time.perf_counter()
    queue_counts_check(queue_ids=[queue_id], repair=True)
    print(f"  queue counts kept (one-off rebuild)   {time.perf_counter() - t:7.1f} s", flush=True)


def pages(ids: dict) -> list[tuple[str, str]]:
    v, q = ids["version"], ids["queue"]
    return [
        ("judge version page", f"/judges/versions/{v}/"),
        ("judge version page, p.40", f"/judges/versions/{v}/?page=40"),
        ("judge version API", f"/api/judge-versions/{v}/"),
        ("judges list", "/judges/"),
        ("queue stats page", f"/queues/{q}/stats/"),
        ("queue stats API", f"/api/queues/{q}/stats/"),
        ("queues list", "/queues/"),
        ("dataset history page", "/datasets/history/history/"),
        ("dataset history API", "/api/datasets/history/history/"),
        ("series page", "/series/?dataset=history"),
        ("series API", "/api/series/?dataset=history"),
        ("runs list", "/runs/"),
    ]


def pages_with_cold(ids: dict) -> list[tuple[str, str, object]]:
    """The pages, and the judge version page and API once more with the measurement's kept figures dropped
    before each fetch (calibration.selectors.summary): the first read after a calibration closes."""
    from calibration.models import JudgeVersion
    from calibration.selectors.gates import latest_measurement
    from calibration.selectors.summary import measurement_forget

    measurement = latest_measurement(JudgeVersion.objects.get(pk=ids["version"]))
    assert measurement is not None, "the bench world's judge version is measured"
    out: list[tuple[str, str, object]] = [(name, path, None) for name, path in pages(ids)]
    out.insert(1, ("judge version page, cold", out[0][1], lambda: measurement_forget(measurement)))
    api = next(k for k, (name, _p, _b) in enumerate(out) if name == "judge version API")
    out.insert(api + 1, ("judge version API, cold", out[api][1], lambda: measurement_forget(measurement)))
    return out


def measure(client, url: str, repeat: int, before=None) -> tuple[float, int, float, int, float]:
    """(median ms, statements, bare SQL ms, status, median CPU ms of this process) of one page. On SQLite
    the database runs in this process, so the CPU time is the page's whole work, which load does not
    stretch as it stretches wall time; on PostgreSQL it leaves the server's share out. `before()` runs
    ahead of each fetch, off the clock."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, cpu = [], []
    status = 0
    for _ in range(repeat):
        connection.queries_log.clear()
        if before is not None:
            before()
        with CaptureQueriesContext(connection) as ctx:
            t, c = time.perf_counter(), time.process_time()
            response = client.get(url)
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
        status = response.status_code
        if status != 200:
            # A redirect or an error page is not the page: its time would mislead.
            raise SystemExit(f"{url}: HTTP {status}, not the page; nothing measured")
    statements = [q["sql"] for q in ctx.captured_queries]
    # The page's own SQL, bare: each statement as it was sent (with its parameters inlined by Django's
    # capture), fetched whole through the same connection.
    bare = []
    for _ in range(repeat):
        t = time.perf_counter()
        with connection.cursor() as cursor:
            for sql in statements:
                if sql.lstrip().upper().startswith(("SELECT", "WITH")):
                    try:
                        cursor.execute(sql)
                        cursor.fetchall()
                    except Exception:  # noqa: BLE001 - a statement whose inlined params do not parse again
                        pass
        bare.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), len(statements), statistics.median(bare), status, statistics.median(cpu)


def label_scan_ms(queue_id: int, repeat: int) -> float:
    """Median ms of the database's own pass over the queue's labels (every label of its items' answers,
    counted by verdict): what no statistics of those labels can beat."""
    from django.db import connection

    sql = (
        "SELECT l.verdict, COUNT(*) FROM annotation_humanlabel l WHERE l.answer_id IN"
        " (SELECT answer_id FROM annotation_queueitem WHERE queue_id = %s) GROUP BY l.verdict"
    )
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(sql, [queue_id])
            cursor.fetchall()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def run_one(label: str, url: str, args) -> None:
    if not args.reuse:
        if label == "postgres":
            fresh_postgres(url)
        else:
            db = Path(url.removeprefix("sqlite:///"))
            db.parent.mkdir(parents=True, exist_ok=True)
            db.unlink(missing_ok=True)
    setup_django(url)
    if args.reuse:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from annotation.models import Queue
        from calibration.models import JudgeVersion

        ids = {
            "version": JudgeVersion.objects.get(judge__name="bench-judge").pk,
            "queue": Queue.objects.get(name="bench queue").pk,
        }
        print("  reusing the world of the last run (its sizes, whatever the options say)")
        keep_counts(ids["queue"])
    else:
        ids = build(args)
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username="engineer"))
    trivial = statistics.median([measure(client, "/api/", 1)[0] for _ in range(max(args.repeat, 5))])
    print(f"  trivial page /api/                    {trivial:7.1f} ms")
    floor = label_scan_ms(ids["queue"], max(args.repeat, 5))
    print(f"  floor: one grouped scan of the queue's labels {floor:7.1f} ms (the queue pages' 'floor x')")
    print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"  {'page':<28} {'stmts':>5} {'ms':>8} {'cpu ms':>7} {'limit ms':>9} {'ratio':>6}  status  floor x")
    for name, path, before in pages_with_cold(ids):
        if args.pages and not any(p in name for p in args.pages.split(",")):
            continue
        ms, n, bare, status, cpu = measure(client, path, args.repeat, before)
        limit = trivial + bare
        times_floor = f"  {ms / floor:7.1f}" if name.startswith("queue stats") else ""
        print(
            f"  {name:<28} {n:>5} {ms:>8.1f} {cpu:>7.1f} {limit:>9.1f} {ms / limit:>6.2f}  {status}{times_floor}",
            flush=True,
        )
    if not args.pages or any(p in "queue stats, blind" for p in args.pages.split(",")):
        # The same two pages read by an engineer blind to 1,000 of the queue's answers.
        blind = Client()
        blind.force_login(blind_viewer(ids["queue"]))
        q = ids["queue"]
        for name, path in (
            ("queue stats page, blind", f"/queues/{q}/stats/"),
            ("queue stats API, blind", f"/api/queues/{q}/stats/"),
        ):
            ms, n, bare, status, cpu = measure(blind, path, args.repeat)
            limit = trivial + bare
            print(
                f"  {name:<28} {n:>5} {ms:>8.1f} {cpu:>7.1f} {limit:>9.1f} {ms / limit:>6.2f}  {status}  {ms / floor:7.1f}",
                flush=True,
            )
    print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibration", type=int, default=10_000)
    parser.add_argument("--queue", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--only", choices=["sqlite", "postgres"])
    parser.add_argument("--reuse", action="store_true", help="measure the world the last run built (no build)")
    parser.add_argument("--pages", default="", help="only the pages whose name holds one of these (comma-separated)")
    args = parser.parse_args()
    if args.only:
        url = PG_URL if args.only == "postgres" else f"sqlite:///{ROOT / 'var' / 'bench' / 'pages.sqlite3'}"
        print(
            f"{args.only}: {args.calibration} calibration items, {args.queue} queue items, {args.runs} runs",
            flush=True,
        )
        run_one(args.only, url, args)
        return
    # Each database in a child process: Django is set up once per process.
    for label in ["sqlite"] + ([] if args.no_postgres else ["postgres"]):
        cmd = [sys.executable, __file__, "--only", label]
        cmd += ["--calibration", str(args.calibration), "--queue", str(args.queue), "--runs", str(args.runs)]
        cmd += ["--repeat", str(args.repeat)] + (["--reuse"] if args.reuse else [])
        cmd += ["--pages", args.pages] if args.pages else []
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
