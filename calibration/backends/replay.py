"""`replay`: verdicts a judge produced outside the project, imported with `import_verdicts`."""

from calibration.backends.base import (
    Backend,
    JudgeItem,
    JudgeResult,
    PermanentJudgeError,
)


def _reported(record: object, key: str) -> str:
    """The served model or fingerprint an imported line carried ("" when it carried none)."""
    value = record.get(key) if isinstance(record, dict) else None
    return value[:200] if isinstance(value, str) else ""


class ReplayBackend(Backend):
    name = "replay"
    concurrent = False

    def judge(self, item: JudgeItem) -> JudgeResult:
        from calibration.models import ImportedVerdict

        rows = list(
            ImportedVerdict.objects.filter(
                judge_version_id=self.judge_version_id, run_id=item.run_id, qid=item.qid
            ).values_list("criterion", "verdict", "value", "record")
        )
        found = next(((v, record) for c, v, _value, record in rows if not c), None)
        given = {c: value for c, _v, value, _r in rows if c}
        # A criterion the version scores with no imported value, or one outside its values, is invalid.
        values = {
            c["name"]: given[c["name"]] if given.get(c["name"]) in c["values"] else "invalid" for c in self.criteria
        }
        if found is None:
            raise PermanentJudgeError(
                f"no imported verdict for {item.run_id}/{item.qid}; import it with import_verdicts"
            )
        verdict, record = found
        served = _reported(record, "served_model"), _reported(record, "system_fingerprint")
        if verdict not in ("correct", "incorrect"):
            return JudgeResult(
                verdict="invalid",
                raw_output=str(record),
                reason=f"imported verdict {verdict!r}",
                values=values,
                served_model=served[0],
                system_fingerprint=served[1],
            )
        return JudgeResult(
            verdict=verdict,
            raw_output=str(record.get("raw_output", "")) if isinstance(record, dict) else "",
            latency_ms=None,
            values=values,
            served_model=served[0],
            system_fingerprint=served[1],
        )
