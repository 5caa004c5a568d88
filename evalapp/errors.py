"""The one domain error every service raises: a user-facing message plus itemised problems."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where (line, field) and what. `item` is the index (from 0) of an
    element of a JSON array file, which has no lines to name (another tool's export, through a bridge)."""

    message: str
    line: int | None = None
    field: str | None = None
    item: int | None = None

    def __str__(self) -> str:
        where = []
        if self.item is not None:
            where.append(f"item {self.item}")
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        return (", ".join(where) + ": " if where else "") + self.message

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"line": self.line, "field": self.field, "message": self.message}
        if self.item is not None:
            body["item"] = self.item
        return body


class ServiceError(Exception):
    """Raised by services for input the user must fix; nothing has been written when it is raised.

    `code` follows the command exit codes: 2 bad input, 1 the answer is no, 3 cannot answer yet.
    """

    def __init__(self, message: str, problems: list[Problem] | None = None, *, code: int = 2, status: int = 400):
        super().__init__(message)
        self.message = message
        self.problems = list(problems or [])
        self.code = code
        self.status = status

    def __str__(self) -> str:
        if not self.problems:
            return self.message
        return self.message + "\n" + "\n".join(f"  {p}" for p in self.problems)

    def as_dict(self) -> dict[str, Any]:
        return {"error": self.message, "problems": [p.as_dict() for p in self.problems]}


class NotFound(ServiceError):
    """An unknown dataset, version, run or user named by the caller."""

    def __init__(self, message: str):
        super().__init__(message, code=2, status=404)
