"""Following a hub conversation on the shared client socket: until the answer to a message
is over (`ConversationFollower._follow`, the rules in `session.py`'s docstring), and live
between answers (`follow`). The socket is a hint and REST the record: a quiet socket, or one
that came back, has the gap filled with `GET …/messages?after=`."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator
from datetime import UTC, datetime
from typing import Any

from talkie_tui.backends.cuckoo.feed import END, Feed, Subscription
from talkie_tui.backends.cuckoo.outgoing import CuckooOutgoing, CuckooUpdate
from talkie_tui.backends.cuckoo.reducer import CuckooConversation
from talkie_tui.backends.session import Broken, Failure, Recovered
from talkie_tui.chat.conversation import Change
from talkie_tui.chat.turns import (
    AttachmentPart,
    ButtonsPart,
    NoticePart,
    Part,
    QuickRepliesPart,
    TextPart,
    Turn,
)
from talkie_tui.core.errors import TalkieError, UnauthorizedError
from talkie_tui.i18n import _
from talkie_tui.protocol.cuckoo.client import CuckooClient
from talkie_tui.protocol.cuckoo.models import Message
from talkie_tui.protocol.cuckoo.pushes import (
    ActivityPush,
    MessageDeltaPush,
    MessagePush,
    Push,
    ReadyPush,
)
from talkie_tui.protocol.cuckoo.socket import SocketItem, SocketLost, SocketResumed

__all__ = [
    "ACTIVITY_LONGEST",
    "ACTIVITY_SECONDS",
    "CATCH_UP_PAGES",
    "TRIMMED_ID",
    "ConversationFollower",
    "concerns",
]

ACTIVITY_SECONDS = 10.0
"""How long an agent's activity (thinking, working) holds an answer open when the hub gives no
`expires_at`; one that says longer is held at most `ACTIVITY_LONGEST` (the clocks may differ)."""
ACTIVITY_LONGEST = 30.0
CATCH_UP_PAGES = 20
"""The most pages of `?after=` one catch-up reads (100 messages each)."""
TRIMMED_ID = "msg_00000000000000000000000000"
"""The id of the notice turn standing where retention cut the history (it orders first)."""


class ConversationFollower:
    """What a Cuckoo session holds to follow its conversation; `CuckooSession` sets it up."""

    client: CuckooClient
    feed: Feed
    conversation: CuckooConversation
    quiet_seconds: float
    poll_seconds: float
    settle_seconds: float
    _lost: bool  # the socket dropped during a send
    _stop_requested: bool
    _sending: bool
    _waiting_notice: tuple[Turn, NoticePart] | None  # the notice that the reply comes later
    _read_up_to: str | None  # the newest message the hub was told the person has seen

    @property
    def thread_id(self) -> str | None:
        """The conversation (None until one is loaded or chosen)."""
        return self.conversation.thread_id

    # --- outside a send ------------------------------------------------------------------

    async def follow(self) -> AsyncGenerator[CuckooUpdate, None]:
        """The conversation live outside a send (a reply that came late, a message from
        another device of the person, an agent writing on its own), until the backend closes
        or the iteration is left. Pushes that arrive while a send runs are the send's."""
        conversation_id = self.thread_id
        if conversation_id is None:
            return
        subscription = self.feed.subscribe(
            lambda item: not self._sending and concerns(conversation_id)(item)
        )
        with self.feed.watching(conversation_id):
            async with contextlib.aclosing(subscription.items()) as items:
                async for item in items:
                    updates: list[CuckooUpdate] = []
                    if isinstance(item, SocketLost):
                        updates.append(CuckooUpdate(broken=Broken(item.reason)))
                    elif isinstance(item, SocketResumed | ReadyPush):
                        updates.extend(await self._catch_up_quietly())
                        if isinstance(item, SocketResumed):
                            updates.append(CuckooUpdate(recovered=Recovered(complete=True)))
                    elif isinstance(item, Push):
                        updates.extend(self._fold(item))
                    waiting = self._waiting_notice
                    if waiting is not None and self._replied_after(waiting[0].id):
                        # The late reply came: the notice that it would goes first.
                        updates.insert(0, CuckooUpdate(self._clear_waiting_notice()))
                    for update in updates:
                        yield update
                    if isinstance(item, MessagePush):
                        await self.mark_read()

    async def mark_read(self) -> None:
        """Tell the hub the person has seen the conversation on screen up to its newest
        message, so its unread count goes (here and on their other devices)."""
        conversation_id, newest = self.thread_id, self._newest_id()
        if conversation_id is None or newest is None or newest == self._read_up_to:
            return
        try:
            await self.client.read(conversation_id, newest)
        except TalkieError:
            return  # only a count: not worth a word to the person, and the next look tries again
        self._read_up_to = newest

    # --- following -----------------------------------------------------------------------

    async def _follow(
        self, subscription: Subscription, outgoing: CuckooOutgoing
    ) -> AsyncIterator[CuckooUpdate]:
        """Follow the conversation until the answer to `outgoing` is over (see the module)."""
        sent_id = outgoing.hub_message_id
        assert sent_id is not None
        self._stop_requested = False
        clock = time.monotonic
        last_news = last_look = last_message = clock()
        busy: dict[str, float] = {}  # agent id -> when its activity lapses (monotonic)
        while True:
            now = clock()
            deadlines = [last_news + self.quiet_seconds, last_look + self.poll_seconds]
            over_at = self._over_at(sent_id, last_message, busy)
            if over_at is not None:
                deadlines.append(over_at)
            # A deadline passed: what is queued still comes first (get(0)), then the checks.
            item = await subscription.get(max(min(deadlines) - now, 0.0))
            now = clock()
            if item is None:  # quiet: read the record when it is time, then see if it is over
                if now >= last_look + self.poll_seconds or self._lost:
                    last_look = now
                    updates = await self._catch_up_quietly()
                    for update in updates:
                        yield update
                    if updates:
                        last_news = last_message = now
                        continue
                over_at = self._over_at(sent_id, last_message, busy)
                quiet = now - last_news >= self.quiet_seconds
                # Over; or quiet too long (the cap): what came of the answer is the answer.
                if (over_at is not None and now >= over_at) or quiet:
                    if self._settle(outgoing, sent_id):
                        if self._lost:
                            self._lost = False
                            yield CuckooUpdate(recovered=Recovered(complete=True))
                        return
                    if quiet:
                        yield self._gave_up(outgoing, self._quiet_reason())
                        return
                continue
            if item is END:
                if self._stop_requested:
                    reason = _("You stopped waiting; the reply shows here when it comes.")
                    yield self._gave_up(outgoing, reason)
                elif self._settle(outgoing, sent_id):
                    pass  # the answer came; the hub went away after it
                else:
                    yield self._gave_up(outgoing, _("The connection to the hub was closed."))
                return
            if isinstance(item, UnauthorizedError):
                raise item
            if isinstance(item, TalkieError):
                if not self._settle(outgoing, sent_id):
                    yield self._gave_up(outgoing, item.message)
                return
            if isinstance(item, SocketLost):
                self._lost = True
                yield CuckooUpdate(broken=Broken(item.reason))
                continue
            if isinstance(item, SocketResumed | ReadyPush):
                try:
                    updates = await self._catch_up()
                except UnauthorizedError:
                    raise
                except TalkieError:
                    continue  # still lost as far as the record goes: the next look tries again
                last_look = last_news = now
                if updates:
                    last_message = now
                for update in updates:
                    yield update
                if self._lost:
                    self._lost = False
                    yield CuckooUpdate(recovered=Recovered(complete=True))
                continue
            if not isinstance(item, Push):
                continue
            last_news = now
            if isinstance(item, MessagePush | MessageDeltaPush):
                last_message = now
            elif isinstance(item, ActivityPush):
                _note_activity(busy, item, now)
            for update in self._fold(item):
                yield update

    def _over_at(self, sent_id: str, last_message: float, busy: dict[str, float]) -> float | None:
        """When the answer to `sent_id` is over if nothing more comes (None: not yet known:
        no agent message ended after it, or one still streams)."""
        answer = self._answer(sent_id)
        if not answer or any(turn.state == "streaming" for turn in answer):
            return None
        if _asks_the_person(answer[-1]):
            return last_message  # buttons to tap or replies to choose: the person's turn now
        over_at = last_message + self.settle_seconds
        if answer[-1].state != "cancelled":  # a stopped reply waits for no activity
            over_at = max(over_at, *busy.values()) if busy else over_at
        return over_at

    def _fold(self, push: Push) -> list[CuckooUpdate]:
        """Fold in one push: its update, and for a reply that just ended, its other parts
        (buttons, replies, files, a notice) each as an update of its own."""
        conversation = self.conversation
        if isinstance(push, MessageDeltaPush):
            change = conversation.apply(push)
            added = push.text if isinstance(change, TextPart) else None
            return [CuckooUpdate(change, push, added)]
        if not isinstance(push, MessagePush):
            return [CuckooUpdate(conversation.apply(push), push)]
        return self._fold_message(push.message, push)

    def _fold_message(self, message: Message, push: MessagePush | None) -> list[CuckooUpdate]:
        conversation = self.conversation
        before = conversation.turn(message.id)
        was_open = before is None or before.state == "streaming"
        shown = before.text if before is not None else ""
        change = conversation.apply_message(message)
        turn = conversation.turn(message.id)
        if turn is None or turn.role != "assistant":
            return [CuckooUpdate(change, push)]
        text = turn.text
        first: CuckooUpdate
        if text != shown and text.startswith(shown):
            first = CuckooUpdate(_first_text(turn), push, text[len(shown) :])
        else:
            first = CuckooUpdate(change, push)
        updates = [first]
        if was_open and turn.state != "streaming":
            updates.extend(CuckooUpdate(part) for part in turn.parts if _shown_apart(part))
        return updates

    async def _catch_up(self) -> list[CuckooUpdate]:
        """Fill the gap since the newest message here from the record (`?after=`)."""
        conversation_id = self.thread_id
        if conversation_id is None:
            return []
        updates: list[CuckooUpdate] = []
        after = self._newest_id()
        for _page in range(CATCH_UP_PAGES):
            page = await self.client.messages(conversation_id, after=after, limit=100)
            messages = page.messages
            if after is None:  # nothing here yet: the newest page, newest first
                messages = tuple(reversed(messages))
            for message in messages:
                updates.extend(self._fold_message(message, None))
            if after is None or page.next_after is None or not messages:
                break
            after = page.next_after
        return updates

    async def _catch_up_quietly(self) -> list[CuckooUpdate]:
        try:
            return await self._catch_up()
        except UnauthorizedError:
            raise
        except TalkieError:
            return []

    def _newest_id(self) -> str | None:
        for turn in reversed(self.conversation.turns):
            if turn.id.startswith("msg_") and turn.id != TRIMMED_ID:
                return turn.id
        return None

    # --- how a send ends -----------------------------------------------------------------

    def _reply_to(self, sent_id: str) -> Turn | None:
        """The first agent message after the person's `sent_id` that has ended."""
        for turn in self._answer(sent_id):
            if turn.state != "streaming":
                return turn
        return None

    def _answer(self, sent_id: str) -> list[Turn]:
        """The agent's messages after the person's `sent_id`, in order."""
        return [
            turn
            for turn in self.conversation.turns
            if turn.role == "assistant" and turn.id > sent_id and turn.id != TRIMMED_ID
        ]

    def _replied_after(self, sent_id: str) -> bool:
        return self._reply_to(sent_id) is not None

    def _settle(self, outgoing: CuckooOutgoing, sent_id: str) -> bool:
        """Record how the send ended when an answer is here (as its last message ended);
        True when it is."""
        ended = [turn for turn in self._answer(sent_id) if turn.state != "streaming"]
        if not ended:
            return False
        reply = ended[-1]
        notice = next((p for p in reply.parts if isinstance(p, NoticePart)), None)
        if notice is not None and notice.code == "truncated":
            outgoing.failure = Failure(notice.text, code="truncated", retryable=True)
        else:
            outgoing.finished = True
        return True

    def _quiet_reason(self) -> str:
        statuses = set(self.conversation.agent_status.values())
        if "unreachable" in statuses:
            return _(
                "The agent is away; what you sent is delivered when it is back, and its reply "
                "shows here then."
            )
        return _("The agent has not answered yet; its reply shows here when it comes.")

    def _gave_up(self, outgoing: CuckooOutgoing, reason: str) -> CuckooUpdate:
        """The send ends without the reply: the message stays, with a notice saying why."""
        self._lost = False
        turn = self.conversation.turn(outgoing.hub_message_id or "")
        change: Change = None
        if turn is not None:
            notice = NoticePart(reason, level="warning", code="no_reply_yet", kind="cut_off")
            turn.parts.append(notice)
            self._waiting_notice = (turn, notice)
            change = turn
        return CuckooUpdate(
            change, recovered=Recovered(complete=False, reason=reason, pending=True)
        )

    def _clear_waiting_notice(self) -> Turn | None:
        waiting, self._waiting_notice = self._waiting_notice, None
        if waiting is None:
            return None
        turn, notice = waiting
        if notice in turn.parts:
            turn.parts.remove(notice)
        return turn


def concerns(conversation_id: str | None) -> Any:
    """Whether a socket item concerns `conversation_id` (losses and readiness concern all)."""

    def accept(item: SocketItem) -> bool:
        if isinstance(item, SocketLost | SocketResumed | ReadyPush):
            return True
        owner = getattr(item, "conversation_id", None)
        return owner is None or owner == conversation_id

    return accept


def _asks_the_person(turn: Turn) -> bool:
    """The message offers buttons to tap (not yet taken) or quick replies: it waits for the
    person, so the answer ends with it."""
    for part in turn.parts:
        if isinstance(part, QuickRepliesPart) and part.labels:
            return True
        if isinstance(part, ButtonsPart) and part.selected_button_id is None:
            taps = [button for row in part.rows for button in row if button.button_id]
            if taps:
                return True
    return False


def _note_activity(busy: dict[str, float], push: ActivityPush, now: float) -> None:
    """Keep when an agent's activity lapses (idle: at once)."""
    if push.state == "idle":
        busy.pop(push.agent_id, None)
        return
    seconds = ACTIVITY_SECONDS
    if push.expires_at is not None:
        expires = push.expires_at
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=UTC)
        seconds = (expires - datetime.now(UTC)).total_seconds()
    busy[push.agent_id] = now + min(max(seconds, 0.0), ACTIVITY_LONGEST)


def _first_text(turn: Turn) -> TextPart | None:
    return next((part for part in turn.parts if isinstance(part, TextPart)), None)


def _shown_apart(part: Part) -> bool:
    """Parts of a reply `talkie ask` prints on their own lines once it ended."""
    if isinstance(part, ButtonsPart | QuickRepliesPart | AttachmentPart):
        return True
    return isinstance(part, NoticePart) and part.code in ("stopped", "truncated")
