"""Conversations: who may see one, how it looks to a person or an agent, opening a DM."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo import ids, shapes
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.errors import forbidden, invalid, not_found
from talkie_tui.devserver.cuckoo.outbox import Outbox
from talkie_tui.devserver.cuckoo.presence import Presence
from talkie_tui.devserver.cuckoo.storage import Storage


def check_id(value: str, prefix: str, what: str) -> str:
    """422 `invalid_id` unless `value` is a well-formed id of this kind."""
    if not ids.is_id(value, prefix):
        raise invalid("invalid_id", f"{value!r} is not a {what} id.")
    return value


def _agent_participant(part: Row, me: str) -> dict[str, Any]:
    """One of `participants_named` as an agent sees it (as `agent_participants` makes it)."""
    item: dict[str, Any] = {"kind": part["kind"], "id": part["member_id"]}
    item["display_name"] = part["display_name"]
    if part["kind"] == "agent":
        item["handle"] = part["handle"]
    item["is_me"] = part["member_id"] == me
    return item


class Conversations:
    """Lookups and views of conversations.

    The messages' parts sit above this one and are reached by callbacks: `message_form`, a
    message as people's apps see it; `end_stream`, a stream cut short (truncated).
    """

    def __init__(
        self,
        storage: Storage,
        config: HubConfig,
        outbox: Outbox,
        presence: Presence,
        *,
        message_form: Callable[[Row], dict[str, Any]],
        end_stream: Callable[[Row], object],
    ) -> None:
        self.storage = storage
        self.config = config
        self.outbox = outbox
        self.presence = presence
        self._message_form = message_form
        self._end_stream = end_stream

    def window_start(self) -> str:
        """The oldest moment the retention window still covers."""
        return clock.iso(clock.later(-self.config.retention_seconds))

    def for_member(self, member_id: str, conversation_id: str) -> Row:
        """The conversation, if `member_id` is in it (else 404 or 403 `not_participant`); an
        agent a person here blocked has left it (403 `blocked`)."""
        check_id(conversation_id, "cnv", "conversation")
        row, is_member = self.storage.conversation_for(conversation_id, member_id)
        if row is None:
            raise not_found("conversation_not_found", "There is no such conversation.")
        if not is_member:
            raise forbidden("not_participant", "You are not in this conversation.")
        if ids.is_id(member_id, "agt") and self._blocked_agents(conversation_id) & {member_id}:
            raise forbidden("blocked", "The person blocked this agent here.")
        return row

    def _blocked_agents(self, conversation_id: str) -> set[str]:
        return {
            part["member_id"]
            for part in self.storage.participants_named(conversation_id)
            if part["blocked"]
        }

    def people_of(self, conversation_id: str) -> list[str]:
        """The people in a conversation."""
        return [
            part["member_id"]
            for part in self.storage.participants_named(conversation_id)
            if part["kind"] == "user"
        ]

    def check_not_blocked(self, conversation_id: str) -> None:
        """403 `blocked` when a person here blocked its agent (nobody would receive a send)."""
        if self._blocked_agents(conversation_id):
            raise forbidden("blocked", "You blocked this agent; unblock it to write again.")

    def name_of(self, kind: str, member_id: str) -> str:
        """A participant's display name."""
        row = (
            self.storage.get_user(member_id)
            if kind == "user"
            else self.storage.get_agent(member_id)
        )
        return str(row["display_name"]) if row is not None else ""

    def agent_participants(
        self, conversation_id: str, me: str, named: list[Row] | None = None
    ) -> list[dict[str, Any]]:
        """Participants as an agent sees them: kind, id, name, handle and `is_me` (`named`:
        the conversation's `participants_named`, if the caller has them)."""
        if named is not None:
            return [_agent_participant(part, me) for part in named]
        out = []
        for part in self.storage.participants(conversation_id):
            item: dict[str, Any] = {"kind": part["kind"], "id": part["member_id"]}
            if part["kind"] == "agent":
                agent = self.storage.get_agent(part["member_id"])
                item["display_name"] = agent["display_name"] if agent else ""
                item["handle"] = agent["handle"] if agent else ""
            else:
                item["display_name"] = self.name_of("user", part["member_id"])
            item["is_me"] = part["member_id"] == me
            out.append(item)
        return out

    def client_participants(self, conversation_id: str) -> list[dict[str, Any]]:
        """Participants as a person's app sees them (agents with their status)."""
        out = []
        for part in self.storage.participants(conversation_id):
            item: dict[str, Any] = {"kind": part["kind"], "id": part["member_id"]}
            if part["kind"] == "agent":
                agent = self.storage.get_agent(part["member_id"])
                if agent is None:
                    continue
                status = self.presence.status_of(agent["id"])
                item.update(
                    display_name=agent["display_name"],
                    handle=agent["handle"],
                    status="idle" if status == "none" else status,
                    has_avatar=False,
                    starters=agent["starters"],
                    supports_schedules=agent["supports_schedules"],
                )
            else:
                item["display_name"] = self.name_of("user", part["member_id"])
            out.append(item)
        return out

    def client_view(self, row: Row, user_id: str) -> dict[str, Any]:
        """A conversation in the client API's form."""
        since = self.window_start()
        last = self.storage.last_message(row["id"], since, user_id)
        return {
            "id": row["id"],
            "kind": row["kind"],
            "participants": self.client_participants(row["id"]),
            "last_message": self._message_form(last) if last is not None else None,
            "unread_count": self.storage.unread_count(row["id"], user_id, since),
            "created_at": row["created_at"],
        }

    def agent_view(self, row: Row, agent_id: str) -> dict[str, Any]:
        """A conversation in the agent API's form."""
        return {
            **shapes.conversation_ref(row),
            "participants": self.agent_participants(row["id"], agent_id),
        }

    def open_dm(
        self, user_id: str, agent_id: str, pair_token: Row | None = None
    ) -> tuple[Row, bool]:
        """A person's DM with an agent; a new one tells the agent (`conversation.joined`).
        A person who blocked the agent unblocks it instead (403 `blocked`)."""
        existing = self.storage.dm_between(user_id, agent_id)
        if existing is not None:
            return existing, False
        if self.storage.is_blocked(user_id, agent_id):
            raise forbidden("blocked", "You blocked this agent; unblock it to add it again.")
        row = self.storage.create_dm(ids.new_id("cnv"), user_id, agent_id, clock.iso(clock.now()))
        token = None
        if pair_token is not None:
            token = {"id": pair_token["id"], "payload": pair_token["payload"]}
        self.tell_joined(row, agent_id, token)
        return row, True

    def tell_joined(self, row: Row, agent_id: str, token: dict[str, Any] | None) -> None:
        """`conversation.joined` to the agent (`token`: the code's `{id, payload}`, or None)."""
        self.outbox.emit(
            agent_id,
            "conversation.joined",
            {
                "conversation": shapes.conversation_ref(row),
                "participants": self.agent_participants(row["id"], agent_id),
                "pair_token": token,
            },
        )

    def _agent_to_block(self, agent_id: str) -> None:
        check_id(agent_id, "agt", "agent")
        if self.storage.get_agent(agent_id) is None:
            raise not_found("agent_not_found", "There is no such agent.")

    def block(self, user_id: str, agent_id: str) -> None:
        """A person blocks an agent: it leaves their conversation (`conversation.left`, reason
        `user_blocked`), its replies streaming there end, and it may write there no more."""
        self._agent_to_block(agent_id)
        if not self.storage.block(user_id, agent_id, clock.iso(clock.now())):
            return  # blocked already: it left then
        row = self.storage.dm_between(user_id, agent_id)
        if row is None:
            return
        for message in self.storage.streaming_in(row["id"]):
            if message["sender_id"] == agent_id:
                self._end_stream(message)
        self.outbox.emit(
            agent_id,
            "conversation.left",
            {"conversation": shapes.conversation_ref(row), "reason": "user_blocked"},
        )

    def unblock(self, user_id: str, agent_id: str) -> None:
        """A person unblocks an agent: it joins their conversation again, with no pair token."""
        self._agent_to_block(agent_id)
        if not self.storage.unblock(user_id, agent_id):
            return  # not blocked: nothing changes
        row = self.storage.dm_between(user_id, agent_id)
        if row is not None:
            self.tell_joined(row, agent_id, None)
