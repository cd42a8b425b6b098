"""What a person does to their own view of a hub and to themselves (`notes/cuckoo.md` §1.2):
hide one message for themselves (`DELETE …/messages/{id}`) and change their display name
(`PATCH /v1/client/me`). Clearing a whole conversation is `CuckooClient.clear`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from talkie_tui.protocol.cuckoo.models import User
from talkie_tui.protocol.net.rest import path_segment

if TYPE_CHECKING:
    from talkie_tui.protocol.cuckoo.client import CuckooClient

__all__ = ["MAX_DISPLAY_NAME", "hide_message", "rename"]

MAX_DISPLAY_NAME = 64
"""The longest display name the reference hub takes (one line)."""


async def hide_message(client: CuckooClient, conversation_id: str, message_id: str) -> None:
    """`DELETE …/messages/{id}`: the message is hidden for this person (the agent keeps it)."""
    route = (
        f"v1/client/conversations/{path_segment(conversation_id)}"
        f"/messages/{path_segment(message_id)}"
    )
    await client._send("DELETE", client.url(route))


async def rename(client: CuckooClient, display_name: str) -> User:
    """`PATCH /v1/client/me {display_name}`: the person as the hub now names them."""
    name = " ".join(display_name.split())
    user: User = await client._field(
        User, "PATCH", "v1/client/me", "user", body={"display_name": name}
    )
    return user
