"""What a person changes of their own on a hub: their display name, and their view of a
conversation (a message hidden, everything so far cleared) — for them only; the agent keeps
every message. The wire is `protocol/cuckoo/message_ops.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from talkie_tui.backends.cuckoo.session import TRIMMED_ID, CuckooSession
from talkie_tui.chat.turns import Turn
from talkie_tui.protocol.cuckoo import message_ops
from talkie_tui.protocol.cuckoo.message_ops import MAX_DISPLAY_NAME
from talkie_tui.protocol.talkie.models import User

if TYPE_CHECKING:
    from talkie_tui.protocol.cuckoo.client import CuckooClient

__all__ = ["MAX_DISPLAY_NAME", "HubAccount", "clear_for_me", "hide_for_me", "rename"]


class HubAccount(Protocol):
    """The person's line to a hub (a `CuckooBackend`): its client, and who they are."""

    client: CuckooClient
    user: User | None


async def rename(backend: HubAccount, display_name: str) -> User:
    """Change the person's display name on the hub (what agents and other people see)."""
    user = await message_ops.rename(backend.client, display_name)
    backend.user = User(id=user.id, name=user.display_name)
    return backend.user


async def hide_for_me(backend: HubAccount, session: CuckooSession, turn: Turn) -> None:
    """Hide one message of the session's conversation for the person; it leaves the
    conversation shown."""
    conversation_id = session.thread_id
    if conversation_id is None or not turn.id.startswith("msg_") or turn.id == TRIMMED_ID:
        raise ValueError("only a message the hub stored can be hidden")
    await message_ops.hide_message(backend.client, conversation_id, turn.id)
    session.conversation.forget(turn)


async def clear_for_me(backend: HubAccount, session: CuckooSession) -> None:
    """Hide every message of the session's conversation so far, for the person; the
    conversation shown is emptied."""
    conversation_id = session.thread_id
    if conversation_id is None:
        return
    await backend.client.clear(conversation_id)
    conversation = session.conversation
    for turn in list(conversation.turns):
        conversation.forget(turn)
    conversation.next_before = None  # nothing older is shown to the person any more
    conversation.trimmed = False
