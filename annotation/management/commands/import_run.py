from annotation.bridges import BridgeOptions, bridged_import, formats, not_mapped_text
from annotation.bridges.foreign import option_pairs
from annotation.services.runs import run_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Import a system run: the run record on the first line, one answer per later line."

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument(
            "--strict",
            action="store_true",
            help="refuse a run record missing pinned fields or its dataset hash (exit 2) instead of warning",
        )
        parser.add_argument(
            "--format",
            default="jsonl",
            help=f"the file's format: {', '.join(formats('run'))} (default: the project's own JSON Lines)",
        )
        parser.add_argument("--run-id", help="the run record's run_id (a foreign file's own name for it otherwise)")
        parser.add_argument("--system", help="the run record's system")
        parser.add_argument("--dataset", help="the run record's dataset")
        parser.add_argument(
            "--record",
            action="append",
            metavar="KEY=VALUE",
            help="any other run record field (model_snapshot=…, prompt_hash=…); these win over the file's",
        )

        for name, what in (
            ("qid", "the qid (ragas: a column; deepeval: an additional_metadata key; promptfoo: a var)"),
            ("question", "the question text matched to the dataset (ragas: a column; promptfoo: a var)"),
            ("answer", "the answer (langsmith: an outputs key; ragas: a column)"),
            ("contexts", "the retrieved contexts (langsmith: an outputs key; ragas: a column; promptfoo: a var)"),
            ("feedback", "langsmith: the feedback key whose score is the harness's correct (default: correct)"),
        ):
            parser.add_argument(f"--{name}-key", help=f"where a foreign file holds {what}")
        parser.add_argument("--provider", help="promptfoo: the provider (label or id) whose answers are the run")

    def run(self, **o):
        record = option_pairs(o["record"], option="--record")
        record.update({k: o[k] for k in ("run_id", "system", "dataset") if o.get(k)})
        keys = {k: o[f"{k}_key"] for k in ("qid", "question", "answer", "contexts", "feedback") if o[f"{k}_key"]}
        if o["provider"]:
            keys["provider"] = o["provider"]
        options = BridgeOptions(dataset=o["dataset"], run_id=o["run_id"], run_record=record, keys=keys)

        def write(path):
            result = run_import(path=path, strict=o["strict"])
            for warning in result.warnings:
                self.stderr.write(f"warning: {warning}")
            return result.as_dict()

        return bridged_import(kind="run", fmt=o["format"], path=o["file"], options=options, write=write), 0

    def text(self, p):
        return (
            f"run {p['run_id']}: {p['answers']} answers on {p['dataset'] or 'no dataset'} {p['dataset_hash']}"
            + not_mapped_text(p)
        )
