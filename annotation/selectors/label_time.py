"""Time per label: how long an expert takes to tag a question and an annotator to label an answer, and
how long what is left would take at that pace.

Per person: items, the median, 90th percentile and total active seconds of those timed, and a projection
for what is left (a dataset's untagged questions; the labels a queue still needs) at that person's
median and at the team's (the median of every timed item, pooled). Medians, not means (evalstats.timing);
items with no figure and zero-second items are left out and counted, and a person with no timing gets
no figure and a note saying so.

Timing only: counts and seconds per person, never a verdict, a rationale or which run answered. That is
why queue_label_time reads every label of the queue whoever asks (like queue_progress's counts), where
queue_stats must leave out the answers in the viewer's blind scope.
"""

from django.contrib.auth import get_user_model
from django.db.models import F, Sum

from annotation.models import Dataset, Queue, QueueItem
from annotation.selectors.datasets import working_records
from annotation.selectors.queue_counts import kept_seconds, live_seconds
from annotation.selectors.queues import pool_usernames
from annotation.selectors.tagging import gold_state, tagged_seconds
from evalapp.validation import raise_problems, seconds_problem
from evalstats.timing import TimeSummary, duration_words, projection, time_summary


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _seconds(value: float) -> str:
    """A median in seconds up to ten minutes (90 s reads better than 2 min), then in words."""
    return f"{round(value, 1):g} s" if value < 600 else duration_words(value)


def _left_out(s: TimeSummary, unit: tuple[str, str], *, min_seconds: float) -> str:
    """'2 questions at 0 s, 1 with no figure' for the items a summary left out ('' when none)."""
    parts = []
    if s.zero:
        parts.append(f"{_plural(s.zero, *unit)} at 0 s")
    if s.untimed:
        parts.append(f"{_plural(s.untimed, *unit)} with no figure")
    if s.short:
        parts.append(f"{_plural(s.short, *unit)} under {min_seconds:g} s")
    return ", ".join(parts)


def _figures(s: TimeSummary, left: int) -> dict:
    ahead = projection(left, s.median)
    return {
        "items": s.items,
        "timed": s.n,
        "untimed": s.untimed,
        "zero_seconds": s.zero,
        "short": s.short,
        "median_seconds": None if s.median is None else round(s.median, 1),
        "p90_seconds": None if s.p90 is None else round(s.p90, 1),
        "total_seconds": round(s.total, 1),
        "projection_seconds": None if ahead is None else round(ahead, 1),
        "projection": None if ahead is None else duration_words(ahead),
    }


def _report(
    per_person: dict[str, list[float | None]],
    *,
    left: int,
    left_what: tuple[str, str],
    unit: tuple[str, str],
    no_timing: str,
    nothing_left: str,
    min_seconds: float,
) -> dict:
    """The shared body of both reports: per person, the team, and the sentences the pages show."""
    people = []
    for username in sorted(per_person):
        s = time_summary(per_person[username], min_seconds=min_seconds)
        row = {"username": username, **_figures(s, left)}
        if s.items == 0:
            row["note"] = f"no {unit[1]} yet"
        elif s.n == 0:
            row["note"] = f"no timing: {_plural(s.items, *unit)}, none with active seconds; {no_timing}"
        elif s.excluded:
            row["note"] = f"{s.excluded} of {s.items} left out: {_left_out(s, unit, min_seconds=min_seconds)}"
        else:
            row["note"] = ""
        if left and s.median is not None:
            row["sentence"] = (
                f"The {_plural(left, *left_what)} {'needs' if left == 1 else 'need'} about {row['projection']} "
                f"at {username}'s median ({_seconds(s.median)} a {unit[0]})."
            )
        else:
            row["sentence"] = ""
        people.append(row)
    team = time_summary([v for values in per_person.values() for v in values], min_seconds=min_seconds)
    figures = _figures(team, left)
    if left == 0:
        sentence = nothing_left
    elif team.median is None:
        sentence = f"No timing yet, so no projection for the {_plural(left, *left_what)}: {no_timing}."
    else:
        sentence = (
            f"The {_plural(left, *left_what)} {'needs' if left == 1 else 'need'} about {figures['projection']} "
            f"at the team's median ({_seconds(team.median)} a {unit[0]})."
        )
    left_out = _left_out(team, unit, min_seconds=min_seconds)
    return {
        "unit": unit[0],
        "left": left,
        "min_seconds": float(min_seconds),
        "team": figures,
        "people": people,
        "sentence": sentence,
        "excluded": f"Left out of the figures: {left_out}." if left_out else "",
    }


def _check(min_seconds: float) -> None:
    raise_problems("the time report's parameters are not valid", seconds_problem(min_seconds, "min_seconds"))


def tagging_time(dataset: Dataset, *, min_seconds: float = 0.0) -> dict:
    """Seconds per tagged question per expert (the edit audit, as tagging.expert_stats counts them) and
    the working copy's untagged questions at each expert's median and the team's."""
    _check(min_seconds)
    per_person: dict[str, list[float | None]] = {}
    for (username, _qid), seconds in tagged_seconds(dataset).items():
        per_person.setdefault(username, []).append(seconds)
    left = sum(
        1 for item in working_records(dataset) if gold_state(item["record"], dataset.no_answer_stratum) == "untagged"
    )
    report = _report(
        per_person,
        left=left,
        left_what=("untagged question", "untagged questions"),
        unit=("question", "questions"),
        no_timing="saves sent without active seconds, as scripts send them, count 0 s",
        nothing_left="Every question of the working copy is tagged: nothing is left.",
        min_seconds=min_seconds,
    )
    return {"kind": "tagging", "dataset": dataset.name, **report}


def queue_label_time(queue: Queue, *, min_seconds: float = 0.0) -> dict:
    """Seconds per label per annotator of the queue (each label's active seconds, as the labelling page
    measured them) and the labels the queue still needs at each annotator's median and the team's.

    Every pool member has a row, with no figure until they label."""
    _check(min_seconds)
    # Each done assignment's label seconds (none without a label), counted by annotator and value: kept
    # beside the pair counts, else one grouped join; as many rows as distinct figures, not one a label.
    # In value order, so both give the same sums to the last bit.
    counted = [
        (annotator_id, seconds if timed else None, n)
        for (_q, annotator_id, timed, seconds), n in sorted(
            (kept_seconds(queue.pk) if queue.counts_kept else live_seconds(queue_id=queue.pk)).items()
        )
    ]
    names = dict(get_user_model().objects.filter(pk__in={r[0] for r in counted}).values_list("pk", "username"))
    per_person: dict[str, list[float | None]] = {name: [] for name in pool_usernames(queue)}
    for annotator_id, seconds, n in counted:
        per_person.setdefault(names[annotator_id], []).extend([seconds] * n)
    left = (
        QueueItem.objects.filter(queue=queue, status=QueueItem.OPEN, done__lt=queue.overlap).aggregate(
            left=Sum(queue.overlap - F("done"))
        )["left"]
        or 0
    )
    report = _report(
        per_person,
        left=left,
        left_what=("label left", "labels left"),
        unit=("label", "labels"),
        no_timing="labels imported or sent without active seconds carry no figure",
        nothing_left="Every item has all its labels: nothing is left.",
        min_seconds=min_seconds,
    )
    return {"kind": "labelling", "queue": queue.pk, "name": queue.name, **report}
