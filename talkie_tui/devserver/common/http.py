"""HTTP pieces of any server: the bearer token of a request, pydantic errors in words, and a
middleware that answers an unexpected exception with the server's own 500 body.

Each protocol keeps its error envelope (their bodies differ: talkie/1 always says `retryable`,
Minara has `code` and `message` only, Cuckoo adds `field` and `request_id`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from talkie_tui.devserver.common.errors import ServerApiError

logger = logging.getLogger(__name__)


class ErrorResponse(Protocol):
    """A server's error body: `error_response(status, code, message, headers=…)`."""

    def __call__(
        self, status: int, code: str, message: str, *, headers: Any = None
    ) -> Response: ...


ExceptionHandler = Callable[[Request, Exception], Awaitable[Response]]


async def answer_api_error(request: Request, exc: Exception) -> Response:
    """An API error of any server answers with the body it carries."""
    assert isinstance(exc, ServerApiError)
    return exc.response()


def router_errors(
    error_response: ErrorResponse,
    *,
    method_code: str,
    method_status: int = 405,
    not_found_code: str = "not_found",
) -> ExceptionHandler:
    """A handler for the router's own errors (unknown path, wrong method) in the server's
    envelope; `method_code` and `method_status` answer a method not allowed, `not_found_code`
    an unknown path (Cuckoo has no 405: its wrong method is a 422)."""

    async def handle(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        path = request.url.path
        if exc.status_code == 404:
            return error_response(404, not_found_code, f"There is no endpoint at {path}.")
        if exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            message = f"{request.method} is not allowed on {path} (allowed: {allowed})."
            return error_response(method_status, method_code, message, headers=exc.headers)
        code = "invalid_request" if exc.status_code < 500 else "internal"
        return error_response(exc.status_code, code, exc.detail, headers=exc.headers)

    return handle


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer …` header value."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


def describe_validation_error(exc: ValidationError, *, limit: int = 3) -> str:
    """Turn a pydantic error into one readable sentence naming the offending fields."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(item) for item in error["loc"]) or "body"
        parts.append(f"{where}: {error['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more problem(s)")
    return "; ".join(parts)


Model = TypeVar("Model", bound=BaseModel)


def validated_body(
    model: type[Model],
    payload: Any,
    *,
    what: str,
    invalid: Callable[[str], Exception],
    not_an_object: str | None = None,
) -> Model:
    """`payload` as `model`, or `invalid(message)` raised (`not_an_object` where it is no dict)."""
    if not_an_object is not None and not isinstance(payload, dict):
        raise invalid(not_an_object)
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise invalid(f"Invalid {what}: {describe_validation_error(exc)}.") from exc


class CatchInternalErrors:
    """ASGI middleware: an unexpected exception becomes `internal_error()` instead of a bare 500."""

    def __init__(self, app: ASGIApp, internal_error: Callable[[], Response]) -> None:
        self.app = app
        self.internal_error = internal_error

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app, answering `internal_error()` if it raises before responding."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            logger.exception("unexpected error on %s %s", scope["method"], scope["path"])
            if not started:
                await self.internal_error()(scope, receive, send)
