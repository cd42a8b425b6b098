"""A conversation of a Cuckoo hub: messages sent, the agents' replies followed, folded by the
reducer (`reducer.CuckooConversation`).

`send` shows the person's message at once, POSTs it with an idempotency key (the same key on a
retry, `again`: the hub stores one message), then follows the conversation on the client socket
until the agent's answer is over. An answer on a hub may be several messages (through the
bridge, a card and then the streamed text; a text and then a message with buttons), each made
whole (`message.created`) or streamed (`message.started`/`delta`/`completed`), so the answer is
over when an agent message came after the person's, none is streaming, the agent's activity
went idle or lapsed (a stopped reply does not wait for it), and `SETTLE_SECONDS` passed
without a new message — or at once when the last message asks the person (buttons to tap,
quick replies: it is their turn, and the app takes a tap only between answers); every agent
message until then is the send's. The socket is a hint
and REST the record: when the socket came up (again), and whenever it stays quiet for
`POLL_SECONDS`, the gap is filled with `GET …/messages?after=<the newest message here>`; the
reducer keys every message by id, so nothing is missed and nothing shows twice. A dropped
socket is a `lost` update ("reconnecting") and the catch-up after it a `recovered` one.

An agent may never answer (it is away, or busy): after `QUIET_SECONDS` without news of the
conversation the send ends, the message kept with a notice saying the reply will show when it
comes; `follow()` keeps the conversation live outside a send, and takes the notice away when the
reply arrives.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from talkie_tui.backends.base import Attachment, Broken, Failure, Recovered
from talkie_tui.backends.cuckoo.feed import END, Feed, Subscription
from talkie_tui.backends.cuckoo.reducer import CuckooConversation
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
from talkie_tui.protocol.cuckoo.client import CuckooClient, new_idempotency_key
from talkie_tui.protocol.cuckoo.files import check_count
from talkie_tui.protocol.cuckoo.models import Conversation, Message
from talkie_tui.protocol.cuckoo.pushes import (
    ActivityPush,
    MessageDeltaPush,
    MessagePush,
    Push,
    ReadyPush,
)
from talkie_tui.protocol.cuckoo.socket import SocketItem, SocketLost, SocketResumed

__all__ = [
    "ACTIVITY_SECONDS",
    "POLL_SECONDS",
    "QUIET_SECONDS",
    "READY_SECONDS",
    "SETTLE_SECONDS",
    "TRIMMED_ID",
    "CuckooOutgoing",
    "CuckooSession",
    "CuckooUpdate",
    "NoConversation",
    "choose_conversation",
    "push_wire",
]

QUIET_SECONDS = 90.0
"""How long a send waits with no news of its conversation before it ends (the reply may come
later: it shows then)."""
SETTLE_SECONDS = 1.2
"""An answer is over this long after its last message ended, when nothing streams and the
agent's activity is idle or lapsed (another message of the answer may still come until then)."""
ACTIVITY_SECONDS = 10.0
"""How long an agent's activity (thinking, working) holds an answer open when the hub gives no
`expires_at`; one that says longer is held at most `ACTIVITY_LONGEST` (the clocks may differ)."""
ACTIVITY_LONGEST = 30.0
POLL_SECONDS = 10.0
"""After this long without a push, the conversation is read over REST (the record)."""
READY_SECONDS = 5.0
"""How long a send waits for the socket to be up before it sends anyway (REST fills the gap)."""
CATCH_UP_PAGES = 20
"""The most pages of `?after=` one catch-up reads (100 messages each)."""
TRIMMED_ID = "msg_00000000000000000000000000"
"""The id of the notice turn standing where retention cut the history (it orders first)."""


class NoConversation(TalkieError):
    """The person has no conversation with an agent on this hub to send to."""


def push_wire(push: Push) -> str:
    """A push as one line of JSON in the socket's own form: `{"type", "data"}`."""
    data = push.model_dump(mode="json", exclude={"type"}, exclude_defaults=True)
    return json.dumps({"type": push.type, "data": data}, ensure_ascii=False, separators=(",", ":"))


def choose_conversation(conversations: Sequence[Conversation]) -> Conversation:
    """The conversation a message goes to when none was named: the one with an agent (the
    most recent of several)."""
    with_agents = [c for c in conversations if c.agents()]
    if not with_agents:
        raise NoConversation(
            _(
                "You have no conversation with an agent on this hub yet; add one in the hub's "
                "app (a pairing code from its owner), then try again."
            )
        )

    def newest(conversation: Conversation) -> float:
        last = conversation.last_message
        when = (last.created_at if last else None) or conversation.created_at
        return when.timestamp() if when is not None else 0.0

    return max(with_agents, key=newest)


class CuckooOutgoing:
    """A message of the person on its way; re-sent, it keeps its idempotency key
    (`message_id`), so the hub stores it once."""

    def __init__(
        self,
        text: str,
        message_id: str,
        *,
        conversation_id: str | None = None,
        attachments: Sequence[Attachment] = (),
        reply_to: str | None = None,
        tap: tuple[str, str] | None = None,
    ) -> None:
        check_count(len(attachments))
        self.text = text
        self.message_id = message_id
        self.conversation_id = conversation_id
        self.attachments = tuple(attachments)
        self.reply_to = reply_to
        self.tap = tap  # (source message id, button id): a button tapped, not text
        self.sent: Message | None = None  # the message as the hub stored it
        self.finished = False
        self.failure: Failure | None = None

    @property
    def settled(self) -> bool:
        """True once the reply ended (complete, stopped, cut short) or the send failed."""
        return self.finished or self.failure is not None

    @property
    def thread_id(self) -> str | None:
        """The conversation the message goes to."""
        return self.conversation_id

    @property
    def run_id(self) -> str | None:
        """What `Backend.stop` stops: the conversation's replies, once the message is sent."""
        return self.conversation_id if self.sent is not None else None

    @property
    def hub_message_id(self) -> str | None:
        """The hub's id of the message, once it was stored."""
        return self.sent.id if self.sent is not None else None


@dataclass(frozen=True, slots=True)
class CuckooUpdate:
    """One step of a send: a push folded in (`push`), a change from the record, a loss or a
    recovery."""

    change: Change = None
    push: Push | None = None
    text_added: str | None = None
    broken: Broken | None = None
    recovered: Recovered | None = None

    @property
    def lost(self) -> bool:
        """The socket dropped: it is reconnecting."""
        return self.broken is not None

    @property
    def delta(self) -> str | None:
        """The text this step added to an agent's reply, when it added text."""
        return self.text_added if isinstance(self.change, TextPart) else None

    @property
    def proposes_action(self) -> bool:
        """A hub proposes no talkie/1 actions (its agents send buttons)."""
        return False

    @property
    def wire(self) -> str | None:
        """The push as `{type, data}` JSON (None for a step that received none)."""
        return push_wire(self.push) if self.push is not None else None


class CuckooSession:
    """One conversation of a hub, and the messages sent into it."""

    def __init__(
        self,
        client: CuckooClient,
        feed: Feed,
        conversation_id: str | None = None,
        *,
        quiet_seconds: float | None = None,
        poll_seconds: float | None = None,
        ready_seconds: float | None = None,
        settle_seconds: float | None = None,
    ) -> None:
        self.client = client
        self.feed = feed
        self.conversation = CuckooConversation(conversation_id)
        self.quiet_seconds = QUIET_SECONDS if quiet_seconds is None else quiet_seconds
        self.poll_seconds = POLL_SECONDS if poll_seconds is None else poll_seconds
        self.ready_seconds = READY_SECONDS if ready_seconds is None else ready_seconds
        self.settle_seconds = SETTLE_SECONDS if settle_seconds is None else settle_seconds
        self._sent_ids: dict[str, str] = {}  # idempotency key -> the hub's message id
        self._lost = False
        self._stop_requested = False
        self._sending = False
        self._subscription: Subscription | None = None
        self._waiting_notice: tuple[Turn, NoticePart] | None = None

    # --- the Session interface -----------------------------------------------------------

    @property
    def thread_id(self) -> str | None:
        """The conversation (None until one is loaded or chosen)."""
        return self.conversation.thread_id

    @property
    def waiting(self) -> bool:
        """True while the socket is reconnecting during a send."""
        return self._lost

    def stop_waiting(self) -> bool:
        """Stop waiting for the reply while the socket is down; it shows when it comes."""
        if not self._lost:
            return False
        self._stop_requested = True
        if self._subscription is not None:
            self._subscription.put_end()
        return True

    async def load(self, thread_id: str) -> CuckooConversation:
        """The conversation's newest page, through the reducer (the agents' status too)."""
        page = await self.client.messages(thread_id)
        conversation = CuckooConversation(thread_id)
        try:
            about = await self.client.conversation(thread_id)
        except TalkieError:
            about = None
        if about is not None:
            conversation.name_members(about.participants)
            for agent in about.agents():
                if agent.status:
                    conversation.agent_status[agent.id] = agent.status
        conversation.load_page(page)
        self.conversation = conversation
        self._sent_ids.clear()
        self.mark_trimmed()
        return conversation

    def prepare(
        self,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        reply_to: str | None = None,
    ) -> CuckooOutgoing:
        """A new message (a fresh idempotency key); keep it to retry with the same key. More
        than ten files are refused here (FileRefused)."""
        return CuckooOutgoing(
            text,
            new_idempotency_key(),
            conversation_id=self.thread_id,
            attachments=attachments,
            reply_to=reply_to,
        )

    def again(
        self,
        text: str,
        message_id: str,
        *,
        attachments: Sequence[Attachment] | None = None,
        reply_to: str | None = None,
    ) -> CuckooOutgoing:
        """The message with the idempotency key `message_id` once more (its files kept when
        none are given): the hub answers with the message the first send stored, if it did."""
        if attachments is None:
            attachments = self._attachments_of(message_id)
        return CuckooOutgoing(
            text,
            message_id,
            conversation_id=self.thread_id,
            attachments=attachments,
            reply_to=reply_to,
        )

    def prepare_tap(self, message_id: str, button_id: str) -> CuckooOutgoing:
        """A tap of a button of the agent's message `message_id`, sent like a message (the hub
        sends the button's label as the person's words), its reply followed by `send`."""
        label = button_id
        turn = self.conversation.turn(message_id)
        for part in turn.parts if turn is not None else ():
            if isinstance(part, ButtonsPart):
                for row in part.rows:
                    for button in row:
                        if button.button_id == button_id:
                            label = button.label
        return CuckooOutgoing(
            label,
            new_idempotency_key(),
            conversation_id=self.thread_id,
            tap=(message_id, button_id),
        )

    async def send(self, outgoing: CuckooOutgoing) -> AsyncIterator[CuckooUpdate]:
        """Send (or re-send) a message and yield each step of the agent's answer (every message
        of it), until the answer is over (see the module), or the agent stays quiet too long.

        Raises a TalkieError when the message could not be sent (it stays, marked; send it
        again unchanged), and UnauthorizedError when the hub refused the session.
        """
        self._clear_waiting_notice()
        # The message is in the conversation before anything can fail (finding the agent's
        # conversation asks the hub too): a hub that is down keeps it, marked, with Retry.
        turn = self._user_turn(outgoing)
        earlier = False  # the chosen conversation's messages before this one were folded in
        if outgoing.conversation_id is None:
            try:
                outgoing.conversation_id = self.thread_id or await self._choose()
                if self.thread_id is None:
                    self.conversation.thread_id = outgoing.conversation_id
                    earlier = await self._fold_earlier(outgoing.conversation_id)
            except TalkieError:
                turn.state = "failed"
                raise
        if earlier:  # shown as a reload would show them: before the message
            yield CuckooUpdate(recovered=Recovered(complete=True))
        if self.thread_id is None:
            self.conversation.thread_id = outgoing.conversation_id
        conversation_id = outgoing.conversation_id
        self._sending = True
        subscription = self.feed.subscribe(_about(conversation_id))
        self._subscription = subscription
        try:
            with self.feed.watching(conversation_id):
                await self.feed.wait_ready(self.ready_seconds)
                try:
                    message = await self._post(outgoing)
                except TalkieError:
                    turn.state = "failed"  # the notice with Retry is the caller's to add, once
                    raise
                outgoing.sent = message
                self._sent_ids[outgoing.message_id] = message.id
                yield CuckooUpdate(self.conversation.adopt_sent(turn, message))
                async for update in self._follow(subscription, outgoing):
                    yield update
        finally:
            self._subscription = None
            subscription.close()
            self._sending = False
            self._lost = False

    # --- outside a send ------------------------------------------------------------------

    async def follow(self) -> AsyncGenerator[CuckooUpdate, None]:
        """The conversation live outside a send (a reply that came late, a message from
        another device of the person, an agent writing on its own), until the backend closes
        or the iteration is left. Pushes that arrive while a send runs are the send's."""
        conversation_id = self.thread_id
        if conversation_id is None:
            return
        subscription = self.feed.subscribe(
            lambda item: not self._sending and _about(conversation_id)(item)
        )
        try:
            with self.feed.watching(conversation_id):
                while True:
                    item = await subscription.get()
                    if item is END:
                        return
                    if isinstance(item, TalkieError):
                        raise item
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
        finally:
            subscription.close()

    def mark_trimmed(self) -> Turn | None:
        """When the oldest page is here and the hub's retention cut what came before it, a
        notice stands first saying so (once)."""
        conversation = self.conversation
        if conversation.next_before is not None or not conversation.trimmed:
            return None
        if conversation.turns and conversation.turns[0].id == TRIMMED_ID:
            return None
        text = _("Older messages are no longer kept.")
        notice = NoticePart(text, level="warning", code="trimmed", kind="cut_off")
        turn = Turn(TRIMMED_ID, "assistant", [notice])
        conversation.turns.insert(0, turn)
        return turn

    # --- sending -------------------------------------------------------------------------

    async def _choose(self) -> str:
        chosen = choose_conversation(await self.client.conversations())
        self.conversation.name_members(chosen.participants)  # its agent's turns carry its name
        return chosen.id

    async def _fold_earlier(self, conversation_id: str) -> bool:
        """The newest page of a conversation the first message chose (the agent's greeting,
        what was said on another device): True when it had any."""
        page = await self.client.messages(conversation_id)
        self.conversation.load_page(page)
        self.mark_trimmed()
        return bool(page.messages)

    async def _post(self, outgoing: CuckooOutgoing) -> Message:
        conversation_id = outgoing.conversation_id
        assert conversation_id is not None
        if outgoing.tap is not None:
            source, button = outgoing.tap
            return await self.client.tap(
                conversation_id, button, source, idempotency_key=outgoing.message_id
            )
        return await self.client.send(
            conversation_id,
            outgoing.text,
            attachments=[a.key for a in outgoing.attachments],
            reply_to=outgoing.reply_to,
            idempotency_key=outgoing.message_id,
        )

    def _user_turn(self, outgoing: CuckooOutgoing) -> Turn:
        """The person's turn of `outgoing`: the one shown before (a retry), else a new one."""
        stored = self._sent_ids.get(outgoing.message_id)
        for turn in self.conversation.turns:
            if turn.role == "user" and turn.id in (outgoing.message_id, stored):
                turn.delivered()
                turn.state = "done"
                return turn
        parts = [
            AttachmentPart(a.key, a.filename, a.media_type, a.size, a.kind, a.url)
            for a in outgoing.attachments
        ]
        turn = self.conversation.add_user_message(
            outgoing.message_id, outgoing.text, attachments=parts
        )
        if not outgoing.text:
            turn.parts = [p for p in turn.parts if not isinstance(p, TextPart)]
        return turn

    def _attachments_of(self, message_id: str) -> list[Attachment]:
        stored = self._sent_ids.get(message_id)
        for turn in self.conversation.turns:
            if turn.role == "user" and turn.id in (message_id, stored):
                return [
                    Attachment(p.key, p.filename, p.media_type, p.size, p.kind, p.url)
                    for p in turn.parts
                    if isinstance(p, AttachmentPart)
                ]
        return []

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


def _about(conversation_id: str | None) -> Any:
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
