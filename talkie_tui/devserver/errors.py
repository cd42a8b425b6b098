"""The §3 error envelope and the exception that carries it out of a handler."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pydantic import ValidationError
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)


class ApiError(Exception):
    """An error answer: raised anywhere in a handler, rendered as the §3 envelope."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        retryable: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retryable = retryable
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        """The HTTP response for this error."""
        return error_response(
            self.status, self.code, self.message, retryable=self.retryable, headers=self.headers
        )


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    retryable: bool = False,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A JSON response with the §3 body."""
    body = {"error": {"code": code, "message": message, "retryable": retryable}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


def not_found(what: str) -> ApiError:
    """404 for an unknown thread, action, file…"""
    return ApiError(404, "not_found", f"{what} was not found.")


def invalid_request(message: str) -> ApiError:
    """400 for malformed input."""
    return ApiError(400, "invalid_request", message)


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


class CatchInternalErrors:
    """ASGI middleware: an unexpected exception becomes a 500 envelope instead of a bare 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app, answering 500 `internal` if it raises before responding."""
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
                response = error_response(
                    500, "internal", "The server hit an unexpected error. Please try again later."
                )
                await response(scope, receive, send)
