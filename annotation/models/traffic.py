"""Production traffic: questions people asked (a search-box log, tickets, conversation logs), each given a
stratum by a rule or by hand, so the labelled set's strata can be set beside what is really asked
(annotation.selectors.traffic)."""

from django.db import models

STRATUM_SOURCES = ("rule", "manual", "none")
RULE_KINDS = ("keyword", "regex", "metadata")


class TrafficRule(models.Model):
    """Puts matching traffic questions in a stratum. The highest priority that matches wins; among
    equal priorities the older rule does."""

    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.PROTECT, related_name="traffic_rules")
    stratum = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=[(k, k) for k in RULE_KINDS])
    # keyword: words to find in the normalised text; regex: a Python pattern searched in the raw text;
    # metadata: "key=value", equal to the metadata's value at key (compared as text).
    pattern = models.CharField(max_length=500)
    priority = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset_id", "-priority", "id"]

    def __str__(self):
        return f"{self.kind}:{self.pattern} -> {self.stratum}"


class TrafficQuestion(models.Model):
    """One distinct production question (by normalised text); asked `count` times over the imports."""

    dataset = models.ForeignKey("annotation.Dataset", on_delete=models.PROTECT, related_name="traffic")
    text = models.TextField()
    # casefolded, punctuation stripped, whitespace collapsed: what two askings of one question share.
    normalized_text = models.TextField()
    # sha256 of normalized_text: what the uniqueness rests on, as a long text cannot be a btree key in PostgreSQL.
    text_key = models.CharField(max_length=64)
    asked_at = models.DateTimeField(null=True, blank=True)
    last_asked_at = models.DateTimeField(null=True, blank=True)
    count = models.PositiveIntegerField(default=1)
    source = models.CharField(max_length=100, blank=True)
    # JSON text rather than a JSON column: PostgreSQL's jsonb would reorder the keys given.
    metadata = models.TextField(default="{}")
    stratum = models.CharField(max_length=100, null=True, blank=True)  # noqa: DJ001 (NULL is "unclassified")
    stratum_source = models.CharField(max_length=10, choices=[(s, s) for s in STRATUM_SOURCES], default="none")
    rule = models.ForeignKey(TrafficRule, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    imported_at = models.DateTimeField(auto_now_add=True)
    import_batch = models.CharField(max_length=32)
    # The working-copy qid this question was proposed as, once proposed for tagging (never proposed twice).
    proposed_qid = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["dataset_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "text_key"], name="uniq_traffic_text"),
        ]
        indexes = [models.Index(fields=["dataset", "stratum"], name="traffic_stratum")]

    def __str__(self):
        return f"{self.dataset_id}:{self.text[:40]}"
