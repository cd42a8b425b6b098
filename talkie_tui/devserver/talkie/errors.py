"""The §3 error envelope and the exception that carries it out of a handler."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import JSONResponse

from talkie_tui.devserver.common.errors import ServerApiError


class ApiError(ServerApiError):
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
        super().__init__(status, code, message, headers=headers)
        self.retryable = retryable

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


not_found = ApiError.not_found
invalid_request = ApiError.invalid_request


def internal_error() -> JSONResponse:
    """500 `internal` for an unexpected exception (its details stay in the server's log)."""
    return error_response(
        500, "internal", "The server hit an unexpected error. Please try again later."
    )
