"""Who may call the annotation endpoints, and the parsers an upload accepts."""

from rest_framework.parsers import FormParser, MultiPartParser

from evalapp.api import (
    JSONLinesParser,
    JSONParser,
)
from evalapp.roles import ADJUDICATOR, ENGINEER, EXPERT, HasRole

READERS = HasRole(EXPERT, ENGINEER, ADJUDICATOR)


CURATORS = HasRole(EXPERT, ENGINEER)


# Runs, their answers, scores and labels are the engineers' (adjudicators settle items, blind to runs);
# the blind scope (annotation.policies.can_read_run) applies on top, in the selectors.
RUN_READERS = HasRole(ENGINEER)


UPLOAD_PARSERS = [MultiPartParser, FormParser, JSONLinesParser, JSONParser]
