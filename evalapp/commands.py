"""The shared shape of every management command: --json output on stdout, text on stderr, exit codes.

Exit codes (INTERFACES.md): 0 ok, 1 "the answer is no", 2 bad input (nothing written), 3 cannot answer yet.
"""

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from evalapp.errors import ServiceError


class EvalCommand(BaseCommand):
    """Subclasses implement run(**options) -> (payload dict, exit code) and, optionally, text(payload)."""

    json_option = True

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # Our commands take --version HASH (a dataset version), which Django's own --version would shadow.
        kwargs.setdefault("conflict_handler", "resolve")
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        if self.json_option:
            parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
        self.add_command_arguments(parser)

    def add_command_arguments(self, parser: CommandParser) -> None:
        pass

    def run(self, **options: Any) -> tuple[dict[str, Any], int]:
        raise NotImplementedError

    def text(self, payload: dict[str, Any]) -> str:
        return json.dumps(payload, indent=2, ensure_ascii=False)

    def run_or_exit(self, **options: Any) -> tuple[dict[str, Any], int]:
        """run(), with a ServiceError reported (as JSON too with --json) and turned into its exit code."""
        try:
            return self.run(**options)
        except ServiceError as exc:
            if options.get("json"):
                self.stdout.write(json.dumps(exc.as_dict(), ensure_ascii=False))
            self.stderr.write(f"error: {exc}")
            sys.exit(exc.code)

    def handle(self, *args: Any, **options: Any) -> None:
        payload, code = self.run_or_exit(**options)
        if options.get("json"):
            self.stdout.write(json.dumps(payload, ensure_ascii=False))
        else:
            self.stderr.write(self.text(payload)) if code else self.stdout.write(self.text(payload))
        if code:
            sys.exit(code)
