"""`agreement FILE`: every agreement figure between two raters' label columns in a JSONL file, or, with
--raters, Fleiss' kappa and Krippendorff's alpha among any number of raters."""

import math

from evalapp.commands import EvalCommand
from evalapp.errors import Problem, ServiceError
from evalapp.jsonl import read_jsonl, require_file
from evalapp.validation import iters_problem, raise_problems, seed_problem
from evalstats.kappa import unordered_problem, unordered_weights_problem
from evalstats.multirater import METRICS, multi_rater_agreement
from evalstats.report import agreement_report_from_rows, agreement_rows, rater_rows


def _pct(x):
    return "—" if x is None else f"{100 * x:.1f}%"


def _num(x):
    return "—" if x is None else f"{x:.2f}"


def _interval(ci):
    return "—" if ci is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _label_order(text, *, numeric):
    """--labels L1,L2,… as a list of labels (numbers when the file's labels are numbers); exit 2 if malformed."""
    entries = [e.strip() for e in text.split(",")]
    problems = []
    if any(not e for e in entries):
        problems.append(Problem("--labels has an empty label; write the labels separated by commas, e.g. low,mid,high"))
    labels = []
    for e in entries:
        if not e:
            continue
        if numeric:
            value = _number(e)
            if value is None:
                problems.append(
                    Problem(f"--labels gives {e!r}, which is not a number, but the file's labels are numbers")
                )
                continue
            e = value
        if e in labels:
            problems.append(Problem(f"--labels names {e!r} twice; each label must appear once"))
        else:
            labels.append(e)
    if problems:
        raise ServiceError("bad option --labels; nothing was measured", problems)
    return labels


def _number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def _outside(rows, labels, keys=("a", "b")):
    """A problem for every label in the rows that --labels does not name, by line and field."""
    shown = ", ".join(str(x) for x in labels)
    known = set(labels)
    return [
        Problem(f"label {r[k]!r} is not in --labels ({shown})", line=r["line"], field=k)
        for r in rows
        for k in keys
        if r[k] not in known
    ]


def _read(path, check):
    """The rows of a JSONL file checked by `check`; exit 2 naming every bad line and field."""
    problems, records = [], []
    for line, obj, problem in read_jsonl(path):
        if problem:
            problems.append(problem)
        else:
            records.append((line, obj))
    rows, errors = check(records)
    problems += [Problem(e.message, line=e.line, field=e.field) for e in errors]
    if problems:
        problems.sort(key=lambda p: p.line or 0)
        raise ServiceError(f"{path}: {len(problems)} problem(s); nothing was measured", problems)
    return rows


class Command(EvalCommand):
    help = (
        'Agreement between two raters from JSONL lines {"id", "a", "b", "stratum"?}: raw and '
        "chance agreement, Cohen's kappa with its standard error and intervals, PABAK, AC1, the "
        'confusion counts (a/b) and the same per stratum. With --raters, lines {"id", "rater", "label"} '
        "from any number of raters: Fleiss' kappa and Krippendorff's alpha with a bootstrap over items."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")
        parser.add_argument(
            "--weights",
            choices=["linear", "quadratic"],
            default=None,
            help="weighted kappa; needs ordered labels: numbers, or an order given with --labels",
        )
        parser.add_argument(
            "--labels",
            metavar="L1,L2,…",
            default=None,
            help="the labels in their order (weighted kappa's positions); every label in FILE must be one of them",
        )
        parser.add_argument(
            "--raters",
            action="store_true",
            help='lines are {"id", "rater", "label"}: any number of raters, missing ratings allowed; '
            "prints Fleiss' kappa and Krippendorff's alpha with a bootstrap over items",
        )
        parser.add_argument(
            "--metric",
            choices=list(METRICS),
            default=None,
            help="with --raters: alpha's distance between labels (default nominal; ordinal and interval need "
            "ordered labels: numbers, or --labels)",
        )
        parser.add_argument("--iters", type=int, default=10_000, help="bootstrap draws, 1..100000 (default 10000)")
        parser.add_argument("--seed", type=int, default=0, help="0..4294967295 (default 0)")

    def run(self, **o):
        raise_problems("bad option", iters_problem(o["iters"], "--iters"), seed_problem(o["seed"], "--seed"))
        path = require_file(o["file"])
        if o["raters"]:
            return self._raters(path, o), 0
        if o["metric"] is not None:
            raise ServiceError("bad option --metric; nothing was measured", [Problem("--metric goes with --raters")])
        rows = _read(path, agreement_rows)
        labels = None
        if o["labels"] is not None:
            labels = _label_order(o["labels"], numeric=any(not isinstance(r["a"], str) for r in rows))
            problems = _outside(rows, labels)
            if problems:
                raise ServiceError(f"{path}: {len(problems)} label(s) not in --labels; nothing was measured", problems)
        elif o["weights"]:
            found = sorted({str(r[k]) for r in rows for k in ("a", "b") if isinstance(r[k], str)})
            problem = unordered_weights_problem(found, o["weights"])
            if problem:
                raise ServiceError(f"cannot weigh the labels of {path}; nothing was measured", [Problem(problem)])
        report = agreement_report_from_rows(rows, labels=labels, weights=o["weights"], iters=o["iters"], seed=o["seed"])
        return report, 0

    def _raters(self, path, o):
        """--raters: Fleiss' kappa and Krippendorff's alpha over {"id", "rater", "label"} lines."""
        if o["weights"]:
            raise ServiceError(
                "bad option --weights; nothing was measured",
                [Problem("--weights is for two raters; with --raters choose the distance with --metric")],
            )
        metric = o["metric"] or "nominal"
        rows = _read(path, rater_rows)
        labels = None
        if o["labels"] is not None:
            labels = _label_order(o["labels"], numeric=any(not isinstance(r["label"], str) for r in rows))
            problems = _outside(rows, labels, keys=("label",))
            if problems:
                raise ServiceError(f"{path}: {len(problems)} label(s) not in --labels; nothing was measured", problems)
        elif metric != "nominal":
            found = sorted({r["label"] for r in rows if isinstance(r["label"], str)})
            problem = unordered_problem(found, f"{metric} alpha")
            if problem:
                raise ServiceError(f"cannot order the labels of {path}; nothing was measured", [Problem(problem)])
        result = multi_rater_agreement(
            [r["id"] for r in rows],
            [r["rater"] for r in rows],
            [r["label"] for r in rows],
            labels=labels,
            metric=metric,
            iters=o["iters"],
            seed=o["seed"],
        )
        return result.to_dict()

    def text(self, p):
        if "krippendorff_alpha" in p:
            return _raters_text(p)
        labels = p["labels"]
        kind = f"{p['weights']}-weighted kappa" if p["weights"] else "kappa"
        lines = [f"{p['n']} items, labels: {', '.join(str(x) for x in labels) if labels else '—'}"]
        baseline = ""
        if p["always_correct_agreement"] is not None:
            baseline = f"   always-{p['positive']!r} baseline {_pct(p['always_correct_agreement'])}"
        lines.append(f"  raw agreement {_pct(p['raw_agreement'])}   chance {_pct(p['chance_agreement'])}{baseline}")
        if p["kappa"] is None:
            lines.append(f"  {kind}: undefined ({p['reason']})")
        else:
            lines.append(
                f"  {kind} {p['kappa']:.3f}   se {_num(p['kappa_se'])}   95% CI {_interval(p['kappa_ci95'])}"
                f"   bootstrap {_interval(p['bootstrap_ci95'])} ({p['bootstrap']['iters']} draws, "
                f"seed {p['bootstrap']['seed']})"
            )
        lines.append(f"  PABAK {_num(p['pabak'])}   AC1 {_num(p['ac1'])}")
        if labels:
            names = [str(x) for x in labels]
            width = max(9, *(len(x) for x in names)) + 2
            lines.append("  confusion (rows a, columns b):")
            lines.append("    " + " " * width + "".join(f"{x:>{width}}" for x in names))
            for la in names:
                cells = "".join(f"{p['confusion'][f'{la}/{lb}']:>{width}}" for lb in names)
                lines.append(f"    {la:<{width}}{cells}")
        if p["per_stratum"]:
            lines.append("  per stratum:")
            for name, s in p["per_stratum"].items():
                kappa = _num(s["kappa"]) if s["kappa"] is not None else "undefined"
                flag = "   too small to conclude" if s["too_small"] else ""
                lines.append(f"    {name:24} n={s['n']:<6} raw {_pct(s['raw_agreement']):>6}   kappa {kappa}{flag}")
        lines += [f"  WARNING: {w}" for w in p["warnings"]]
        return "\n".join(lines)


def _raters_text(p):
    lines = [
        f"{p['n_items']} items rated by two or more of {p['raters']} raters, {p['n_ratings']} ratings, "
        f"labels: {', '.join(str(x) for x in p['labels']) or '—'}"
    ]
    lines.append(f"  Fleiss' kappa {_num(p['fleiss_kappa'])}")
    b = p["bootstrap"]
    lines.append(
        f"  Krippendorff's alpha ({p['metric']}) {_num(p['krippendorff_alpha'])}   95% CI {_interval(p['alpha_ci95'])}"
        f" (bootstrap over items, {b['iters']} draws, seed {b['seed']})"
    )
    lines += [f"  WARNING: {w}" for w in p["warnings"]]
    return "\n".join(lines)
