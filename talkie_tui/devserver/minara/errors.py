"""Minara's error envelope `{"error": {"code", "message"}}` and the exception that carries it."""

from __future__ import annotations

from starlette.responses import JSONResponse

from talkie_tui.devserver.common.errors import ServerApiError


class ApiError(ServerApiError):
    """An error answer: raised anywhere in a handler, rendered as the envelope (whose `error`
    has `code` and `message` only)."""


not_found = ApiError.not_found
invalid_request = ApiError.invalid_request


def internal_error() -> JSONResponse:
    """500 for an unexpected exception (its details stay in the server's log)."""
    return ApiError.error_response(
        500, "internal", "The gateway hit an unexpected error. Please try again later."
    )
