from calibration.services.alignment import judge_version_propose
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "A new version of V's judge whose prompt carries K of V's disagreements with the humans as corrected "
        "examples; those answers are held out of its calibration (params held_out_exclude)."
    )

    def add_command_arguments(self, parser):
        parser.add_argument("judge_version")
        parser.add_argument("--examples", type=int, required=True, help="how many corrected examples (K)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the draw among the disagreements")

    def run(self, **o):
        return judge_version_propose(judge_version_id=o["judge_version"], examples=o["examples"], seed=o["seed"]), 0

    def text(self, p):
        return (
            f"judge version {p['judge_version']} (v{p['number']}, {p['config_hash'][:15]}) from version "
            f"{p['from_version']}: {len(p['examples'])} example(s) of {p['disagreements']} disagreement(s), "
            f"answers {', '.join(map(str, p['examples']))} held out of its calibration"
        )
