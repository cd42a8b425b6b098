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

    def error_fields(self) -> dict[str, object]:
        """`code`, `message` and `retryable` (always said)."""
        return {**super().error_fields(), "retryable": self.retryable}


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    retryable: bool = False,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A JSON response with the §3 body."""
    return ApiError(status, code, message, retryable=retryable, headers=headers).response()


not_found = ApiError.not_found
invalid_request = ApiError.invalid_request


def internal_error() -> JSONResponse:
    """500 `internal` for an unexpected exception (its details stay in the server's log)."""
    return error_response(
        500, "internal", "The server hit an unexpected error. Please try again later."
    )
