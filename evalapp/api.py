"""What every API view shares: errors as the house error, strict JSON bodies, query parameters validated
by a serializer before the selector runs, pagination, and every answer checked against its declared
serializer (uploaded files as paths are evalapp.uploads)."""

import re
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination, LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from evalapp.errors import Problem, ServiceError
from evalapp.parsers import JSONL_TYPES, JSONLinesParser, JSONParser, read_limited  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from rest_framework.request import Request


def _flatten(detail: object, field: str = "") -> list[Problem]:
    """DRF's nested error detail as one Problem per failing field path ("items[0].qid")."""
    if isinstance(detail, dict):
        out: list[Problem] = []
        for key, value in detail.items():
            name = field if key == "non_field_errors" else (f"{field}.{key}" if field else str(key))
            out.extend(_flatten(value, name))
        return out
    if isinstance(detail, list):
        if all(not isinstance(d, (dict, list)) for d in detail):
            return [Problem(str(d), field=field or None) for d in detail]
        out = []
        for i, value in enumerate(detail):
            if value:
                out.extend(_flatten(value, f"{field}[{i}]"))
        return out
    return [Problem(str(detail), field=field or None)]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every refusal as {"error", "problems": [{"line", "field", "message"}]} with its status: ServiceError,
    and DRF's own validation and parse errors in the same shape."""
    if isinstance(exc, ServiceError):
        return Response(exc.as_dict(), status=exc.status)
    if isinstance(exc, ValidationError):
        problems = _flatten(exc.detail)
        first = problems[0] if problems else Problem("invalid input")
        message = f"invalid input: {first}" if len(problems) <= 1 else f"invalid input: {len(problems)} problems"
        return Response(ServiceError(message, problems).as_dict(), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE // (1024 * 1024)
        return Response(
            {
                "error": f"the request body is larger than {limit} MB; raise DATA_UPLOAD_MAX_MB",
                "problems": [{"line": None, "field": "body", "message": "too large"}],
            },
            status=413,
        )
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "detail" in response.data:
        # DRF's own refusals (401, 403, 405, 415, 429, a malformed body) keep "detail" and gain the house keys.
        response.data = {"error": str(response.data["detail"]), "problems": [], **response.data}
    return response


class ProblemSerializer(serializers.Serializer[Any]):
    line = serializers.IntegerField(allow_null=True)
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()
    item = serializers.IntegerField(
        required=False, help_text="the element's index (from 0) in a JSON array file (another tool's export)"
    )


class ErrorSerializer(serializers.Serializer[Any]):
    """The house refusal (exception_handler); DRF's own refusals (401, 403, 405...) also keep `detail`."""

    error = serializers.CharField()
    problems = ProblemSerializer(many=True)
    detail = serializers.CharField(required=False)


class QuerySerializer(serializers.Serializer[Any]):
    """Base of the query-parameter serializers: `parse(request)` validates request.query_params before the
    selector runs; a refusal is the house error (400) naming each parameter. DRF's CharField already
    refuses NUL and unpaired surrogates, so every free-text parameter is safe for PostgreSQL."""

    @classmethod
    def parse(cls, request: "Request") -> dict[str, Any]:
        data = cls(data=request.query_params)
        if not data.is_valid():
            problems = [
                Problem(
                    "is required" if getattr(detail, "code", "") == "required" else str(detail),
                    field=None if name == "non_field_errors" else name,
                )
                for name, details in data.errors.items()
                for detail in details
            ]
            first = problems[0]
            where = f"query parameter '{first.field}'" if first.field else "query"
            sep = " " if first.message == "is required" else ": "
            raise ServiceError(
                f"{where}{sep}{first.message}" if len(problems) == 1 else f"{len(problems)} bad query parameters",
                problems,
            )
        validated: dict[str, Any] = data.validated_data
        return validated


def whole_number(minimum: int, maximum: int, **kwargs: Any) -> serializers.IntegerField:
    """An integer field whose every refusal states the allowed range."""
    message = f"must be a whole number from {minimum} to {maximum}"
    return serializers.IntegerField(
        min_value=minimum,
        max_value=maximum,
        error_messages={"invalid": message, "min_value": message, "max_value": message, "max_string_length": message},
        **kwargs,
    )


def finite_number(minimum: float, maximum: float, **kwargs: Any) -> serializers.FloatField:
    """A float field refusing NaN, infinities and values outside the range, stating the range."""
    message = f"must be a number from {minimum:g} to {maximum:g}"
    return serializers.FloatField(
        min_value=minimum,
        max_value=maximum,
        error_messages={
            "invalid": message,
            "min_value": message,
            "max_value": message,
            "max_string_length": message,
            "overflow": message,
        },
        **kwargs,
    )


def flag(**kwargs: Any) -> serializers.BooleanField:
    """A yes/no query parameter: 1/0, true/false, yes/no, on/off."""
    return serializers.BooleanField(error_messages={"invalid": "must be true or false (1/0, yes/no, on/off)"}, **kwargs)


class KeysetPagination(CursorPagination):
    """Pages by id (keyset): each page is one indexed range scan however deep it is, where an offset
    makes the database walk every row before it. `count` is kept so a page has the fields an
    offset page has."""

    ordering = "pk"
    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_page_size(self, request: "Request") -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None or raw == "":
            return cast(int, self.page_size)
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 12 or not 1 <= int(raw) <= self.max_page_size:
            raise ServiceError(
                f"query parameter 'page_size' must be a whole number from 1 to {self.max_page_size}",
                [Problem(f"must be a whole number from 1 to {self.max_page_size}", field="page_size")],
            )
        return int(raw)

    def paginate_queryset(self, queryset: Any, request: "Request", view: Any = None) -> list[Any] | None:
        self.count = queryset.count()
        try:
            return super().paginate_queryset(queryset, request, view)
        except NotFound as exc:
            raise ServiceError(
                "query parameter 'cursor' is not a cursor this list gave out; start again without it",
                [Problem("not a cursor this list gave out", field="cursor")],
            ) from exc

    def get_paginated_response(self, data: Any) -> Response:
        return Response(
            {"count": self.count, "next": self.get_next_link(), "previous": self.get_previous_link(), "results": data}
        )

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paged = super().get_paginated_response_schema(schema)
        return {
            **paged,
            "required": ["count", "next", "previous", "results"],
            "properties": {"count": {"type": "integer", "example": 123}, **paged["properties"]},
        }


class Pagination(LimitOffsetPagination):
    """Limit/offset pages of list endpoints; a limit or offset that is not a whole number in range is
    refused (400) instead of silently replaced, and an offset is never beyond what a database can seek.

    With `?page_size=` or `?cursor=` a list pages by keyset instead (KeysetPagination, in id order,
    the same fields): what a script walking a long list should use."""

    max_limit = 1000
    max_offset = 10_000_000
    keyset: KeysetPagination | None = None

    def paginate_queryset(self, queryset: Any, request: "Request", view: Any = None) -> list[Any] | None:
        params = request.query_params
        if "cursor" in params or "page_size" in params:
            self.keyset = KeysetPagination()
            return self.keyset.paginate_queryset(queryset, request, view)
        return super().paginate_queryset(queryset, request, view)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        return [
            *super().get_schema_operation_parameters(view),
            *KeysetPagination().get_schema_operation_parameters(view),
        ]

    def get_paginated_response(self, data: Any) -> Response:
        if self.keyset is not None:
            return self.keyset.get_paginated_response(data)
        return super().get_paginated_response(data)

    def _checked(self, request: "Request", name: str, maximum: int, minimum: int) -> int | None:
        raw = request.query_params.get(name)
        if raw is None or raw == "":
            return None
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 12 or not minimum <= int(raw) <= maximum:
            raise ServiceError(
                f"query parameter '{name}' must be a whole number from {minimum} to {maximum}",
                [Problem(f"must be a whole number from {minimum} to {maximum}", field=name)],
            )
        return int(raw)

    def get_limit(self, request: "Request") -> int | None:
        limit = self._checked(request, self.limit_query_param, self.max_limit, 1)
        return self.default_limit if limit is None else limit

    def get_offset(self, request: "Request") -> int:
        offset = self._checked(request, self.offset_query_param, self.max_offset, 0)
        return 0 if offset is None else offset


_DECLARED: dict[Any, Any] = {}


def strict_schema(schema: Any) -> Any:
    """A copy of an OpenAPI schema in which an object with named properties allows no other key, and a
    nullable reference (drf-spectacular's `allOf: [$ref], nullable: true`) also accepts null."""
    if isinstance(schema, dict):
        out = {k: strict_schema(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        if out.get("nullable") and "allOf" in out and "type" not in out:
            rest = {k: v for k, v in out.items() if k not in ("allOf", "nullable")}
            out = {**rest, "anyOf": [{"allOf": out["allOf"]}, {"enum": [None]}]}
        return out
    if isinstance(schema, list):
        return [strict_schema(v) for v in schema]
    return schema


def declared_schema() -> dict[str, Any]:
    """The project's OpenAPI document as /api/schema/ serves it (generated once per process)."""
    if "schema" not in _DECLARED:
        from drf_spectacular.generators import SchemaGenerator

        _DECLARED["schema"] = SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-untyped-call]
    return cast("dict[str, Any]", _DECLARED["schema"])


def declared_response(path: str, method: str, status_code: int) -> dict[str, Any] | None:
    """The JSON schema an operation declares for a status, its components attached and made strict
    (no undeclared key); None when the operation declares no JSON body for that status."""
    key = (path, method.lower(), status_code)
    if key not in _DECLARED:
        _DECLARED[key] = _declared_response(*key)
    return cast("dict[str, Any] | None", _DECLARED[key])


def _declared_response(path: str, method: str, status_code: int) -> dict[str, Any] | None:
    schema = declared_schema()
    responses = schema["paths"][path][method]["responses"]
    body = (responses.get(str(status_code)) or {}).get("content", {}).get("application/json")
    if body is None:
        return None
    return {**strict_schema(body["schema"]), "components": strict_schema(schema.get("components", {}))}


def operation_path(route: str) -> str:
    """The schema's path of a URL route: "api/runs/<str:run_id>/" -> "/api/runs/{run_id}/" (a `pk` is
    called `id` in the schema, as drf-spectacular names it)."""
    path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
    paths = declared_schema()["paths"]
    return path if path in paths or "{pk}" not in path else path.replace("{pk}", "{id}")


def check_declared_output(request: "Request", response: Response) -> None:
    """Raise AssertionError when a 2xx JSON answer is not what its operation declares: a status it does
    not declare, a key the serializer lacks, a missing required key, or a value of the wrong type."""
    import json

    from openapi_schema_validator import OAS30ReadValidator
    from rest_framework.renderers import JSONRenderer

    route = getattr(getattr(request, "resolver_match", None), "route", None)
    if route is None or not 200 <= response.status_code < 300:
        return
    path = operation_path(route)
    method = request.method or "GET"
    declared = declared_schema()["paths"][path][method.lower()]["responses"]
    if str(response.status_code) not in declared:
        raise AssertionError(f"{request.method} {path} answered {response.status_code}, which it does not declare")
    if response.data is None:
        return
    schema = declared_response(path, method, response.status_code)
    if schema is None:
        raise AssertionError(f"{request.method} {path} {response.status_code} declares no JSON body but sent one")
    key = ("validator", path, request.method, response.status_code)
    if key not in _DECLARED:
        _DECLARED[key] = OAS30ReadValidator(schema)
    sent = json.loads(JSONRenderer().render(response.data))
    errors = sorted(_DECLARED[key].iter_errors(sent), key=lambda e: list(e.absolute_path))
    if errors:
        shown = "; ".join(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:10])
        raise AssertionError(
            f"{request.method} {path} {response.status_code} drifted from its declared "
            f"serializer ({len(errors)} problem(s)): {shown}"
        )


class DeclaredOutput:
    """View mixin: with the API_STRICT_OUTPUT setting on (the test settings), every 2xx answer is checked
    against the response serializer its `extend_schema` declares, so the schema cannot drift from what is
    sent. Off in production: the check costs a schema walk per answer."""

    def finalize_response(self, request: "Request", response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]  # a mixin of APIView
        if getattr(settings, "API_STRICT_OUTPUT", False) and isinstance(response, Response):
            check_declared_output(request, response)
        return response
