"""Who is connected now: people's client sockets (fed frames) and agents' sockets (one each)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

FEED_DEPTH = 1000
SIGNED_OUT = 4002
"""The close code of a socket whose credential ended (the code of a revoked binding)."""
# How long the request that ended a session waits for its sockets' close frames to go out.
CLOSE_WAIT = 5.0

Close = tuple[int, str]


class Feed:
    """The frames waiting for one client socket; `overflowed` when it fell too far behind,
    `ended` (a close code and reason) once its session ended: nothing more goes out then."""

    def __init__(
        self, user_id: str, session_id: str | None, expires_at: datetime | None = None
    ) -> None:
        self.user_id = user_id
        self.session_id = session_id
        self.expires_at = expires_at
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(FEED_DEPTH)
        self.overflowed = False
        self.ended: Close | None = None
        self.closed = asyncio.Event()

    def put(self, text: str | None) -> None:
        """Queue a frame (None ends the feed)."""
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.overflowed = True

    def expired(self) -> bool:
        """Whether the session has expired (a socket past it gets nothing more)."""
        return self.expires_at is not None and datetime.now(UTC) >= self.expires_at

    def end(self, code: int, reason: str) -> None:
        """Close with `code` before anything still queued goes out."""
        self.ended = (code, reason)
        with contextlib.suppress(asyncio.QueueFull):  # a full queue wakes the writer anyway
            self.queue.put_nowait(None)


Effect = Callable[[], None]


def _at_once(effect: Effect) -> None:
    effect()


class ClientFeeds:
    """Every open client socket by person.

    `defer` runs a push once the writes before it are committed (the storage's
    `after_commit`), so an app never sees a message the hub could still lose.
    """

    def __init__(self, defer: Callable[[Effect], None] = _at_once) -> None:
        self._feeds: dict[str, set[Feed]] = {}
        self._defer = defer

    def open(
        self, user_id: str, session_id: str | None, expires_at: datetime | None = None
    ) -> Feed:
        """A new feed for one socket of a person (signed in with `session_id`, if any)."""
        feed = Feed(user_id, session_id, expires_at)
        self._feeds.setdefault(user_id, set()).add(feed)
        return feed

    def close(self, feed: Feed) -> None:
        """Forget a feed."""
        feeds = self._feeds.get(feed.user_id)
        if feeds is not None:
            feeds.discard(feed)
            if not feeds:
                del self._feeds[feed.user_id]

    def push(self, user_ids: Iterable[str], frame_type: str, data: dict[str, Any]) -> None:
        """Send `{type, data}` to every socket of these people."""
        feeds = [feed for user_id in set(user_ids) for feed in self._feeds.get(user_id, ())]
        if not feeds:
            return
        text = json.dumps({"type": frame_type, "data": data}, ensure_ascii=False)

        def put() -> None:
            for feed in feeds:
                feed.put(text)

        self._defer(put)

    async def end_sessions(self, user_id: str, session_ids: Iterable[str]) -> None:
        """Close the sockets of these sessions of a person (4002), and wait until their close
        frames are out: a device signed out hears nothing more once the request that ended it
        has answered."""
        ending = set(session_ids)
        feeds = [feed for feed in self._feeds.get(user_id, ()) if feed.session_id in ending]
        for feed in feeds:
            self.close(feed)  # no push reaches it any more
            feed.end(SIGNED_OUT, "signed out")
        if feeds:
            waits = [asyncio.ensure_future(feed.closed.wait()) for feed in feeds]
            _, pending = await asyncio.wait(waits, timeout=CLOSE_WAIT)
            for waiting in pending:
                waiting.cancel()

    def end_all(self) -> None:
        """End every feed (the hub is stopping)."""
        for feeds in list(self._feeds.values()):
            for feed in list(feeds):
                feed.put(None)


class AgentLink(Protocol):
    """An agent's open socket, as the registry needs it."""

    def wake(self) -> None:
        """Events are due: deliver them."""

    def close_soon(self, code: int, reason: str) -> None:
        """Close the socket with this code."""

    @property
    def caught_up(self) -> bool:
        """Whether every event due has been pushed (a new one may go straight out)."""

    def push_leased(self, event_id: str, frame: str) -> None:
        """Push an event stored already leased to this socket."""

    async def wait_closed(self, within: float) -> None:
        """Wait (at most `within` seconds) until the socket's close frame is out."""


class AgentLinks:
    """The one open socket of each agent."""

    def __init__(self) -> None:
        self._links: dict[str, tuple[str, AgentLink]] = {}

    def attach(self, agent_id: str, binding_id: str, link: AgentLink) -> None:
        """Make `link` the agent's socket; an older one is closed with 4001."""
        old = self._links.get(agent_id)
        self._links[agent_id] = (binding_id, link)
        if old is not None:
            old[1].close_soon(4001, "replaced by a newer socket")

    def detach(self, agent_id: str, link: AgentLink) -> bool:
        """Forget the agent's socket if it is `link`; whether it was."""
        current = self._links.get(agent_id)
        if current is not None and current[1] is link:
            del self._links[agent_id]
            return True
        return False

    def connected(self, agent_id: str) -> bool:
        """Whether the agent has a socket open."""
        return agent_id in self._links

    def caught_up(self, agent_id: str) -> AgentLink | None:
        """The agent's socket if it has pushed every event due, else None."""
        current = self._links.get(agent_id)
        if current is not None and current[1].caught_up:
            return current[1]
        return None

    def wake(self, agent_id: str) -> None:
        """Tell the agent's socket that events are due."""
        current = self._links.get(agent_id)
        if current is not None:
            current[1].wake()

    def revoke(self, agent_id: str, binding_ids: Iterable[str]) -> AgentLink | None:
        """Close the agent's socket with 4002 if it came in on one of these bindings (it)."""
        current = self._links.get(agent_id)
        if current is not None and current[0] in set(binding_ids):
            current[1].close_soon(SIGNED_OUT, "the binding was revoked or replaced")
            return current[1]
        return None

    async def end(self, agent_id: str, binding_ids: Iterable[str]) -> None:
        """Revoke as `revoke` does, and wait until the close frame is out: the backend hears
        nothing more once the request that revoked its binding has answered."""
        link = self.revoke(agent_id, binding_ids)
        if link is not None:
            await link.wait_closed(CLOSE_WAIT)

    def close_all(self, code: int, reason: str) -> None:
        """Close every agent socket (the hub is stopping)."""
        for _, link in list(self._links.values()):
            link.close_soon(code, reason)
