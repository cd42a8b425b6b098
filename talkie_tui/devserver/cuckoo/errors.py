"""Cuckoo's error envelope `{"error": {code, message, field?, request_id}}` and its statuses.

There is no 400 and no 413: malformed input and oversize bodies are 422. The request id comes
from the `RequestIds` middleware (a context variable, so any error raised in a request has it).
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from talkie_tui.devserver.common.errors import ServerApiError
from talkie_tui.devserver.cuckoo import ids

REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")


class ApiError(ServerApiError):
    """An error answer: raised anywhere in a handler, rendered as the envelope."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(status, code, message, headers=headers)
        self.field = field

    def error_fields(self) -> dict[str, object]:
        """`code`, `message`, `field` when one is at fault, and the request's id."""
        fields = super().error_fields()
        if self.field is not None:
            fields["field"] = self.field
        fields["request_id"] = REQUEST_ID.get() or new_request_id()
        return fields

    def as_frame(self) -> dict[str, str]:
        """The `{code, message}` of a socket reply."""
        return {"code": self.code, "message": self.message}


def new_request_id() -> str:
    """A request id: `req_` and the random part of a fresh id."""
    return "req_" + ids.new_id("key")[4:]


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A JSON response with the Cuckoo error body."""
    return ApiError(status, code, message, field=field, headers=headers).response()


def internal_error() -> JSONResponse:
    """500 for an unexpected exception (its details stay in the hub's log)."""
    return error_response(500, "internal", "The hub hit an unexpected error.")


def invalid(code: str, message: str, field: str | None = None) -> ApiError:
    """422: the request is malformed or breaks a rule."""
    return ApiError(422, code, message, field=field)


def not_found(code: str, message: str) -> ApiError:
    """404: no such thing, or it is no longer live."""
    return ApiError(404, code, message)


def conflict(code: str, message: str, field: str | None = None) -> ApiError:
    """409: it conflicts with something that already happened."""
    return ApiError(409, code, message, field=field)


def forbidden(code: str, message: str) -> ApiError:
    """403: the credential is fine, the action is not allowed."""
    return ApiError(403, code, message)


def rate_limited(retry_after: float) -> ApiError:
    """429 with `Retry-After` in whole seconds."""
    seconds = max(1, int(retry_after + 0.999))
    return ApiError(
        429,
        "rate_limited",
        f"Too fast; retry in {seconds} s.",
        headers={"Retry-After": str(seconds)},
    )


class RequestIds:
    """ASGI middleware: every request gets an id (`X-Request-Id`) that error bodies quote."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Set the request id for this request and echo it as a header."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        token = REQUEST_ID.set(request_id)

        async def with_header(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.http.response.start"):
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, with_header)
        finally:
            REQUEST_ID.reset(token)
