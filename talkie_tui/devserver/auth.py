"""Bearer-token check for the protected endpoints (§2.2 development token)."""

from __future__ import annotations

import secrets

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from .errors import error_response

PROTECTED_PREFIXES = ("/api/talkie/", "/api/files/")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer …` header value."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


class BearerAuth:
    """ASGI middleware: the protected endpoints need `Authorization: Bearer <dev token>`."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer 401 for a missing or wrong token, otherwise pass the request on."""
        if (
            scope["type"] == "http"
            and self.token is not None
            and scope["path"].startswith(PROTECTED_PREFIXES)
        ):
            given = bearer_token(Headers(scope=scope).get("authorization"))
            if given is None or not secrets.compare_digest(given.encode(), self.token.encode()):
                message, challenge = (
                    (
                        "Sign-in required: send Authorization: Bearer <token>.",
                        'Bearer realm="talkie"',
                    )
                    if given is None
                    else (
                        "The token is not valid for this server.",
                        'Bearer realm="talkie", error="invalid_token"',
                    )
                )
                response = error_response(
                    401, "unauthorized", message, headers={"WWW-Authenticate": challenge}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
