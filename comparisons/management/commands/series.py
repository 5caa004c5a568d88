from comparisons.selectors.published import correction_words, figure_words
from comparisons.selectors.series import series
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "A system's score over time, split where the dataset hash or the evaluator config hash changes; "
        "each break says what changed. --backfill re-scores earlier runs on the new version where they resolve."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--system", action="append", default=[], help="repeat for several (default: all)")
        parser.add_argument("--backfill", action="store_true")
        parser.add_argument(
            "--criterion", default="", help="score each run by this criterion's pass rule on the final human values"
        )

    def run(self, **o):
        return (
            series(
                dataset=o["dataset"],
                systems=o["system"] or None,
                backfill=o["backfill"],
                criterion=o["criterion"] or None,
            ),
            0,
        )

    def text(self, p):
        lines = [f"dataset {p['dataset']}" + (f", scored by criterion {p['criterion']}" if p.get("criterion") else "")]
        for line in p["lines"]:
            lines.append(f"system {line['system']}")
            for i, seg in enumerate(line["segments"]):
                if i:
                    lines.append(f"  --- break: {line['breaks'][i - 1]['text']}")
                lines.append(
                    f"  segment v{seg['version']} {seg['dataset_hash'][:19]}… evaluator "
                    f"{seg['evaluator_config_hash'][:19] or '(none)'}"
                )
                for pt in seg["points"]:
                    score = f"{pt['score']:.3f}" if pt["score"] is not None else "unscored"
                    lines.append(f"    {pt['started_at'][:16]}  {pt['run_id']:30} {score} (n={pt['n']})")
                for bf in seg["backfilled"]:
                    state = (
                        f"{bf['score']:.3f} backfilled"
                        if bf["resolved"]
                        else (f"not resolvable ({bf['missing_answers']} unanswered, {bf['ungradable']} ungradable)")
                    )
                    lines.append(f"    {bf['started_at'][:16]}  {bf['run_id']:30} {state}")
                    for by in bf["rescored_by"]:
                        lines.append(
                            f"      re-scored by {by['judge']} (judge version {by['judge_version']}): {by['n']}"
                        )
                    for nr in bf["not_rescored"]:
                        lines.append(f"      not re-scored {nr['qid']}: {nr['reason']}")
        for f in p.get("published", []):
            lines.append(f"published {f['run_id']} {f['score']:.3f} to {f['shown_to']}: {figure_words(f)}")
            lines += [f"  corrected: {correction_words(c)}" for c in f["corrections"]]
        return "\n".join(lines)
