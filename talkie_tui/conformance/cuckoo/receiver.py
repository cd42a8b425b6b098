"""A webhook receiver for the hub checks: it keeps every post the hub makes, and may answer an
event's first post with a redirect (which the hub must not follow)."""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

__all__ = ["Post", "Receiver", "webhook_signature"]


def webhook_signature(secret: str, timestamp: str, body: bytes) -> str:
    """`sha256=` + hex HMAC-SHA256 over `timestamp + "." + body`, keyed with SHA-256(secret)."""
    key = hashlib.sha256(secret.encode()).digest()
    return "sha256=" + hmac.new(key, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Post:
    """One post the hub made: its headers (lower-case names) and body."""

    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    """Takes the hub's posts at `/hook`; `/elsewhere` is where a redirect points."""

    redirect_first: bool = False
    fail_first: int = 0  # answer 500 to this many posts of each event (so the hub retries)
    posts: list[Post] = field(default_factory=list)
    elsewhere: int = 0
    _redirected: set[str] = field(default_factory=set)

    def app(self) -> Starlette:
        """The ASGI app to serve."""
        return Starlette(
            routes=[
                Route("/hook", self._hook, methods=["POST"]),
                Route("/elsewhere", self._elsewhere, methods=["GET", "POST"]),
            ]
        )

    async def _hook(self, request: Request) -> Response:
        headers = {key.lower(): value for key, value in request.headers.items()}
        self.posts.append(Post(headers, await request.body(), time.monotonic()))
        event_id = headers.get("x-cuckoo-event-id", "")
        if self.redirect_first and event_id not in self._redirected:
            self._redirected.add(event_id)
            return Response(status_code=307, headers={"Location": "/elsewhere"})
        if len(self.of(event_id)) <= self.fail_first:
            return Response(status_code=500)
        return Response(status_code=204)

    async def _elsewhere(self, request: Request) -> Response:
        self.elsewhere += 1
        return Response(status_code=204)

    def of(self, event_id: str) -> list[Post]:
        """The posts of one event."""
        return [post for post in self.posts if post.headers.get("x-cuckoo-event-id") == event_id]
