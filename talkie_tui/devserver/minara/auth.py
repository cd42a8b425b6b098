"""The gateway's bearer token: every `/v1/...` HTTP route but the health check needs it.

The socket checks its own token (`?token=` or the header) after accepting the upgrade, so that
a browser can read the refusal as close code 4401 (`socket.py`).
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from talkie_tui.devserver.common.http import bearer_token
from talkie_tui.devserver.minara.errors import ApiError

OPEN_PATHS = frozenset({"/healthz", "/v1/healthz"})


def token_matches(expected: str | None, given: str | None) -> bool:
    """Whether `given` opens a gateway that wants `expected` (None: anonymous is fine)."""
    if expected is None:
        return True
    if given is None:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


class BearerAuth:
    """ASGI middleware: a `/v1/...` HTTP request without the right bearer gets 401."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse unauthenticated `/v1/` requests; everything else passes through."""
        path: str = scope.get("path", "")
        if (
            scope["type"] != "http"
            or self.token is None
            or path in OPEN_PATHS
            or not path.startswith("/v1/")
        ):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        given = bearer_token(headers.get(b"authorization", b"").decode("latin-1") or None)
        if token_matches(self.token, given):
            await self.app(scope, receive, send)
            return
        message = (
            "This gateway needs `Authorization: Bearer <token>`."
            if given is None
            else "The bearer token is not valid for this gateway."
        )
        response = ApiError.error_response(
            401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"}
        )
        await response(scope, receive, send)
