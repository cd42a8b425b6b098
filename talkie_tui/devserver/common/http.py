"""HTTP pieces of any server: the bearer token of a request, pydantic errors in words, and a
middleware that answers an unexpected exception with the server's own 500 body.

Each protocol keeps its error envelope (their bodies differ: talkie/1 always says `retryable`,
Minara has `code` and `message` only, Cuckoo adds `field` and `request_id`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)


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
