"""What happens on a hub outside the conversation a session follows, as `LiveUpdate`s: an
agent's status, a message in a conversation no session follows."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Mapping, Set

from talkie_tui.backends.cuckoo.feed import Feed
from talkie_tui.backends.parts.live import LiveUpdate
from talkie_tui.protocol.cuckoo.pushes import AgentStatusPush, MessagePush

__all__ = ["live_updates"]


async def live_updates(
    feed: Feed, agents_of: Mapping[str, Set[str]]
) -> AsyncGenerator[LiveUpdate, None]:
    """An agent's status (`agent_status`, one update per conversation with it: `agents_of`
    maps an agent to them), a message in a conversation no session follows
    (`message_elsewhere`), until the feed closes."""
    async with contextlib.aclosing(feed.subscribe().items()) as items:
        async for item in items:
            if isinstance(item, AgentStatusPush):
                with_agent: list[str | None] = [*sorted(agents_of.get(item.agent_id, ()))]
                for conversation_id in with_agent or [None]:
                    yield LiveUpdate("agent_status", conversation_id, item.status)
            elif (
                isinstance(item, MessagePush)
                and item.type != "message.started"
                and not feed.is_watched(item.conversation_id)
            ):
                yield LiveUpdate("message_elsewhere", item.conversation_id, item.message.id)
