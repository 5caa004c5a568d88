"""seed_demo: load whatever part of the demo is missing (annotation.services.demo, then the calibrated judge of
calibration.services.demo). Running it again never changes what is there: users keep their passwords and
roles, datasets their versions, the judge its settings and measurements."""

from annotation.services.demo import demo_seed
from calibration.services.demo import demo_judge_seed
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = (
        "Load the demo: users (one per role, password demo-USERNAME), the stdlib corpus, the stdlib-support "
        "labelled set with its strata budget, runs demo-rag-v1 and demo-rag-v2, ann1/ann2's labels, a blind "
        "queue and a span judge calibrated on those labels. Only what is missing is loaded: running it again "
        "changes nothing, whatever was done since."
    )

    def add_command_arguments(self, parser):
        parser.add_argument(
            "--no-users", action="store_true", help="do not create or touch the demo users (and print no passwords)"
        )

    def run(self, **o):
        payload = demo_seed(users=not o["no_users"])
        payload["judge"] = demo_judge_seed()
        return payload, 0

    def text(self, p):
        lines = []
        if "users" in p:
            lines.append("users (username / password, roles):")
            lines += [
                f"  {u['username']:<12} {u['password'] or '(already there, unchanged)':<26} {', '.join(u['roles'])}"
                for u in p["users"]
            ]
        c, d = p["corpus"], p["dataset"]
        if c["loaded"]:
            lines.append(f"corpus: {c['documents']} documents, {c['chunks']} new chunks, {c['retired']} retired")
        else:
            lines.append(f"corpus: already loaded ({c['documents']} documents), not re-imported")
        state = "new version" if d["created"] else "already there, unchanged"
        lines.append(f"dataset {d['dataset']} v{d['version']} {d['dataset_hash']} ({state}): {d['examples']} questions")
        lines.append("strata: " + ", ".join(f"{k} {v:g}%" for k, v in p["strata"].items()))
        for r in p["runs"]:
            lines.append(
                f"run {r['run_id']}: {r['answers']} answers ({'imported' if r['imported'] else 'already there'})"
            )
        lab = p["labels"]
        if lab["loaded"]:
            lines.append(
                f"labels: {lab['labels']} ({lab['created']} new, {lab['changed']} changed, "
                f"{lab['unchanged']} unchanged)"
            )
        else:
            lines.append(f"labels: {lab['labels']} already on the demo runs, none loaded")
        if "queue" in p:
            q = p["queue"]
            lines.append(
                f"queue {q['id']} {q['name']!r}: {q['items']} items for {', '.join(q['annotators'])}"
                + ("" if q["created"] else " (already there)")
            )
        j = p["judge"]
        if j["judge_version"] is None:
            lines.append(f"judge {j['judge']}: already there with the team's own versions, not calibrated by the demo")
        else:
            kappa = "undefined" if j["kappa"] is None else f"{j['kappa']:.3f}"
            lines.append(
                f"judge {j['judge']} v{j['version']} (#{j['judge_version']}): gate {j['status']}, kappa {kappa} "
                f"against {j['threshold']:g}, n {j['n']}"
                + ("" if j["created"] or j["calibrated"] else " (already there)")
            )
        return "\n".join(lines)
