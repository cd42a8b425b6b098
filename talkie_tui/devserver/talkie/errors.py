"""The §3 error envelope and the exception that carries it out of a handler."""

from __future__ import annotations

from starlette.responses import JSONResponse

from talkie_tui.devserver.common.errors import ServerApiError


class ApiError(ServerApiError):
    """An error answer: raised anywhere in a handler, rendered as the §3 envelope."""

    # §3 says of every error whether trying again may work; only `Unavailable` says yes.
    retryable = False

    def error_fields(self) -> dict[str, object]:
        """`code`, `message` and `retryable` (always said)."""
        return {**super().error_fields(), "retryable": self.retryable}


class Unavailable(ApiError):
    """503 `upstream_unavailable`: a service the server needs is down; trying again may work."""

    retryable = True

    def __init__(self, message: str) -> None:
        super().__init__(503, "upstream_unavailable", message)


not_found = ApiError.not_found
invalid_request = ApiError.invalid_request


def internal_error() -> JSONResponse:
    """500 `internal` for an unexpected exception (its details stay in the server's log)."""
    return ApiError.error_response(
        500, "internal", "The server hit an unexpected error. Please try again later."
    )
