"""The exception a reference server's handler raises to answer with an error, as the body
`{"error": {code, message, …}}` (each server adds its own fields)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Self

from starlette.responses import JSONResponse


class ServerApiError(Exception):
    """An error answer: raised anywhere in a handler, rendered by `response` (each server's)."""

    def __init__(
        self, status: int, code: str, message: str, *, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})

    @classmethod
    def not_found(cls, what: str) -> Self:
        """404 `not_found` for an unknown thing (a thread, a session, a file…)."""
        return cls(404, "not_found", f"{what} was not found.")

    @classmethod
    def invalid_request(cls, message: str) -> Self:
        """400 `invalid_request` for malformed input (where the protocol has a 400)."""
        return cls(400, "invalid_request", message)

    @classmethod
    def error_response(
        cls, status: int, code: str, message: str, *, headers: Mapping[str, str] | None = None
    ) -> JSONResponse:
        """A JSON response with the server's error body, for an error answered in place."""
        return cls(status, code, message, headers=headers).response()

    def error_fields(self) -> dict[str, object]:
        """The body's `error` object: `code` and `message`, and what a server adds to them."""
        return {"code": self.code, "message": self.message}

    def response(self) -> JSONResponse:
        """The HTTP response for this error, in the server's envelope."""
        return JSONResponse(
            {"error": self.error_fields()}, status_code=self.status, headers=self.headers
        )
