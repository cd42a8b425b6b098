"""Minara's error envelope `{"error": {"code", "message"}}` and the exception that carries it."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import JSONResponse

from talkie_tui.devserver.common.errors import ServerApiError


class ApiError(ServerApiError):
    """An error answer: raised anywhere in a handler, rendered as the envelope."""

    def response(self) -> JSONResponse:
        """The HTTP response for this error."""
        return error_response(self.status, self.code, self.message, headers=self.headers)


def error_response(
    status: int, code: str, message: str, *, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """A JSON response with the Minara error body."""
    body = {"error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


not_found = ApiError.not_found
invalid_request = ApiError.invalid_request


def internal_error() -> JSONResponse:
    """500 for an unexpected exception (its details stay in the server's log)."""
    return error_response(
        500, "internal", "The gateway hit an unexpected error. Please try again later."
    )
