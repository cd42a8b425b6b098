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

from collections.abc import AsyncIterator, Sequence

from talkie_tui.backends.base import Attachment, Recovered
from talkie_tui.backends.cuckoo.feed import Feed, Subscription
from talkie_tui.backends.cuckoo.following import (
    ACTIVITY_SECONDS,
    TRIMMED_ID,
    ConversationFollower,
    concerns,
)
from talkie_tui.backends.cuckoo.outgoing import CuckooOutgoing, CuckooUpdate, push_wire
from talkie_tui.backends.cuckoo.reducer import CuckooConversation
from talkie_tui.chat.turns import (
    AttachmentPart,
    ButtonsPart,
    NoticePart,
    TextPart,
    Turn,
)
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.protocol.cuckoo.client import CuckooClient, new_idempotency_key
from talkie_tui.protocol.cuckoo.models import Conversation, Message

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
POLL_SECONDS = 10.0
"""After this long without a push, the conversation is read over REST (the record)."""
READY_SECONDS = 5.0
"""How long a send waits for the socket to be up before it sends anyway (REST fills the gap)."""


class NoConversation(TalkieError):
    """The person has no conversation with an agent on this hub to send to."""


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


class CuckooSession(ConversationFollower):
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
        self._read_up_to: str | None = None
        self._stop_requested = False
        self._sending = False
        self._subscription: Subscription | None = None
        self._waiting_notice: tuple[Turn, NoticePart] | None = None

    # --- the Session interface -----------------------------------------------------------

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
        await self.mark_read()
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
        if outgoing.thread_id is None:
            try:
                outgoing.thread_id = self.thread_id or await self._choose()
                if self.thread_id is None:
                    self.conversation.thread_id = outgoing.thread_id
                    earlier = await self._fold_earlier(outgoing.thread_id)
            except TalkieError:
                turn.state = "failed"
                raise
        if earlier:  # shown as a reload would show them: before the message
            yield CuckooUpdate(recovered=Recovered(complete=True))
        if self.thread_id is None:
            self.conversation.thread_id = outgoing.thread_id
        conversation_id = outgoing.thread_id
        self._sending = True
        subscription = self.feed.subscribe(concerns(conversation_id))
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
            await self.mark_read()
        finally:
            self._subscription = None
            subscription.close()
            self._sending = False
            self._lost = False

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
        conversation_id = outgoing.thread_id
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
        parts = [a.as_part() for a in outgoing.attachments]
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
