"""A Minara chat session: a turn sent, followed on the stream socket, folded by the reducer.

`send` POSTs the turn (a message that could not be sent raises: the UI keeps it with Retry,
and `again` re-sends it with the same `client_message_id`, which the gateway stores once),
then follows the session's `chat` channel from the last seq this session applied. A dropped
socket is a `lost` update ("reconnecting") and a `recovered` one once the stream resumed; what
the gateway no longer has (a gap, or a `firstSeq` past the next seq) is rebuilt from
`GET /v1/sessions/:id`; when the turn still ran then, its row does not exist yet, so the rest of
it is followed live and the whole answer is loaded from its row once it ended. A gateway of the
older revision answers the POST with the turn's event stream, which is read as the same events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from talkie_tui.backends.base import (
    Attachment,
    AttachmentKind,
    Broken,
    Failure,
    ReasoningEffort,
    Recovered,
)
from talkie_tui.backends.minara.outgoing import MinaraOutgoing, MinaraUpdate, new_message_id
from talkie_tui.backends.minara.reducer import MinaraConversation, conversation_from_rows
from talkie_tui.chat.turns import AttachmentPart, NoticePart, Turn
from talkie_tui.core.errors import (
    EventTooLarge,
    TalkieError,
    UnauthorizedError,
    UnsupportedProtocolVersion,
)
from talkie_tui.i18n import _
from talkie_tui.protocol.minara.client import MinaraClient, SseTurn
from talkie_tui.protocol.minara.models import SessionDetail
from talkie_tui.protocol.minara.stream import MinaraStream
from talkie_tui.protocol.minara.subscription import (
    StreamEvent,
    StreamLost,
    StreamRefused,
    StreamResumed,
    StreamStale,
    Subscription,
)

__all__ = ["MinaraOutgoing", "MinaraSession", "MinaraUpdate"]

CHANNEL = "chat"
# After the older revision's stream broke: when to look at the session for the answer.
SSE_RECOVERY_DELAYS = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)


class MinaraSession:
    """One session of a gateway: its conversation, and the turns sent into it."""

    def __init__(
        self,
        client: MinaraClient,
        stream: MinaraStream,
        session_id: str | None = None,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.stream = stream
        self.conversation: MinaraConversation = MinaraConversation(session_id)
        self.last_seq = 0
        """The last seq this session applied: where the next turn's events begin."""
        self.streaming = False
        """Loaded while a turn ran: `reattach()` follows it."""
        self._sleep = sleep
        self._subscription: Subscription | None = None
        self._lost = False
        self._stop_requested = False

    # --- the Session interface -----------------------------------------------------------

    @property
    def thread_id(self) -> str | None:
        """The session this writes to (None until the first turn was accepted)."""
        return self.conversation.thread_id

    @property
    def waiting(self) -> bool:
        """True while the stream is reconnecting during a turn."""
        return self._lost

    def stop_waiting(self) -> bool:
        """Stop waiting for a lost stream; the turn goes on on the gateway (its answer will be
        in the session). True when there was a wait to stop."""
        if not self._lost:
            return False
        self._stop_requested = True
        subscription = self._subscription
        if subscription is not None:
            subscription.put_end()
        return True

    async def load(self, thread_id: str) -> MinaraConversation:
        """Replace the conversation with the stored session (`GET /v1/sessions/:id`)."""
        detail = await self.client.session(thread_id)
        self._adopt(detail)
        return self.conversation

    def prepare(
        self,
        text: str,
        *,
        attachments: Sequence[Attachment] = (),
        model: str | None = None,
        reasoning_effort: ReasoningEffort | None = None,
        voice_input_key: str | None = None,
    ) -> MinaraOutgoing:
        """A new message (a fresh `client_message_id`); keep it to retry with the same id.
        More than 8 attachments are refused here (FileRefused)."""
        return MinaraOutgoing(
            text,
            new_message_id(),
            session_id=self.thread_id,
            attachments=attachments,
            model=model,
            reasoning_effort=reasoning_effort,
            voice_input_key=voice_input_key,
        )

    def again(
        self,
        text: str,
        message_id: str,
        *,
        attachments: Sequence[Attachment] | None = None,
        model: str | None = None,
        reasoning_effort: ReasoningEffort | None = None,
        voice_input_key: str | None = None,
    ) -> MinaraOutgoing:
        """The message `message_id` once more, with its files when none are given (the
        gateway starts no second turn for a `client_message_id` it stored). When the agent's
        answer to it failed, asking again is a new message (a fresh id): under the old one the
        gateway would start no turn, and nothing would ever answer."""
        if attachments is None:
            attachments = self._attachments_of(message_id)
        answer = self._answered(message_id)
        if answer is not None and answer.state == "error":
            message_id = new_message_id()
        return MinaraOutgoing(
            text,
            message_id,
            session_id=self.thread_id,
            attachments=attachments,
            model=model,
            reasoning_effort=reasoning_effort,
            voice_input_key=voice_input_key,
        )

    async def send(self, outgoing: MinaraOutgoing) -> AsyncIterator[MinaraUpdate]:
        """Send (or re-send) a message and yield each step of the answer, until done or error.

        Raises a TalkieError when the turn could not be sent (it can be sent again unchanged),
        and UnauthorizedError when the gateway refused the token on its stream.
        """
        conversation = self.conversation
        turn = self._user_turn(outgoing)
        outgoing.thread_id = outgoing.thread_id or self.thread_id
        try:
            answer = await self.client.chat_stream(outgoing.request())
        except TalkieError:
            turn.state = "failed"
            raise
        turn.state = "done"
        outgoing.delivered = True
        if turn.delivered():
            yield MinaraUpdate(turn)  # its Retry goes
        if isinstance(answer, SseTurn):
            async for update in self._read_sse(outgoing, answer):
                yield update
            return
        outgoing.thread_id = answer.session_id
        conversation.thread_id = answer.session_id
        start = 0 if answer.is_new else self.last_seq
        async for update in self._follow(answer.session_id, start, outgoing):
            yield update

    # --- what only Minara sessions do ----------------------------------------------------

    async def reattach(self) -> AsyncIterator[MinaraUpdate]:
        """Follow the turn that was running when the session was loaded (`streaming`), from
        the start of the gateway's live buffer; nothing when none runs."""
        session_id = self.thread_id
        if not self.streaming or session_id is None:
            return
        self.streaming = False
        self.conversation.discard_open_answer()  # its questions come again, in place
        async for update in self._follow(session_id, 0, None):
            yield update

    async def rebuild(self) -> MinaraConversation:
        """Load the session again from its rows (after events were missed)."""
        session_id = self.thread_id
        if session_id is None:
            return self.conversation
        detail = await self.client.session(session_id)
        self._adopt(detail)
        return self.conversation

    # --- following a turn ----------------------------------------------------------------

    def _adopt(self, detail: SessionDetail) -> None:
        self.conversation = conversation_from_rows(detail.raw)
        self.conversation.thread_id = self.conversation.thread_id or detail.session.id
        self.last_seq = max(detail.last_seq, 0)
        self.streaming = detail.is_streaming

    def _user_turn(self, outgoing: MinaraOutgoing) -> Turn:
        """The person's turn of `outgoing`, added to the conversation the first time."""
        for turn in self.conversation.turns:
            if turn.id == outgoing.message_id and turn.role == "user":
                return turn
        parts = [
            AttachmentPart(a.key, a.filename, a.media_type, a.size, a.kind, a.url)
            for a in outgoing.attachments
        ]
        return self.conversation.add_user_message(
            outgoing.message_id, outgoing.text, attachments=parts
        )

    def _attachments_of(self, message_id: str) -> list[Attachment]:
        for turn in self.conversation.turns:
            if turn.id == message_id and turn.role == "user":
                return [
                    Attachment(
                        p.key, p.filename, p.media_type, p.size, cast(AttachmentKind, p.kind), p.url
                    )
                    for p in turn.parts
                    if isinstance(p, AttachmentPart)
                ]
        return []

    def _known_turn(self, turn_id: Any) -> bool:
        """True when an answer with this id is in the conversation already (from rows)."""
        if not isinstance(turn_id, str):
            return False
        return any(t.id == turn_id and t.role == "assistant" for t in self.conversation.turns)

    def _answered(self, message_id: str) -> Turn | None:
        """The finished answer after the person's message `message_id`, if the rows hold it."""
        seen = False
        for turn in self.conversation.turns:
            if turn.id == message_id and turn.role == "user":
                seen = True
            elif seen and turn.role == "assistant" and turn.state != "streaming":
                return turn
        return None

    def _settle(self, outgoing: MinaraOutgoing | None, event: Mapping[str, Any]) -> bool:
        """Record how the turn ended, when `event` ends it; True when it did."""
        kind = event.get("type")
        if kind not in ("done", "error"):
            return False
        if outgoing is not None:
            if kind == "done":
                outgoing.finished = True
            else:
                data = event.get("data")
                data = data if isinstance(data, Mapping) else {}
                message, code = data.get("message"), data.get("code")
                outgoing.failure = Failure(
                    self._notice_text() or (message if isinstance(message, str) else ""),
                    code=code if isinstance(code, str) else None,
                    retryable=data.get("retryable") is True,
                )
        return True

    def _notice_text(self) -> str | None:
        """The text of the failure notice that ends the last answer, if it has one."""
        turns = self.conversation.turns
        if turns and turns[-1].role == "assistant":
            for part in reversed(turns[-1].parts):
                if isinstance(part, NoticePart) and part.kind == "failed":
                    return part.text
        return None

    def _settle_from_rows(self, outgoing: MinaraOutgoing | None, answer: Turn) -> None:
        if outgoing is None:
            return
        if answer.state == "error":
            notice = next((p for p in reversed(answer.parts) if isinstance(p, NoticePart)), None)
            outgoing.failure = Failure(
                notice.text if notice else _("The agent failed."),
                code=notice.code if notice else None,
                retryable=notice.retryable if notice else False,
            )
        else:
            outgoing.finished = True

    async def _follow(
        self, session_id: str, from_seq: int, outgoing: MinaraOutgoing | None
    ) -> AsyncIterator[MinaraUpdate]:
        """Follow the session's channel from `from_seq` until a turn not yet shown ends."""
        subscription = self.stream.subscribe(CHANNEL, session_id, from_seq)
        self._subscription = subscription
        self._stop_requested = False
        skipping = False  # inside a turn the conversation holds already (rows, a replay)
        partial = False  # rebuilt while the turn ran: its start is only in its row, once stored
        try:
            async for item in subscription:
                if isinstance(item, StreamEvent):
                    self.last_seq = item.seq
                    event = item.event
                    kind = event.get("type")
                    if kind == "start":
                        data = event.get("data")
                        turn_id = data.get("turn_id") if isinstance(data, Mapping) else None
                        skipping = self._known_turn(turn_id)
                    if skipping:
                        if kind in ("done", "error"):
                            skipping = False
                        continue
                    if partial and kind in ("done", "error"):
                        whole = await self._rebuild_at_end(outgoing)
                        if whole is not None:
                            yield whole
                            return
                    try:
                        change = self.conversation.apply(event)
                    except UnsupportedProtocolVersion as error:
                        yield self._refuse_version(outgoing, error, event, item.seq)
                        return
                    yield MinaraUpdate(change, event, item.seq)
                    if self._settle(outgoing, event):
                        return
                elif isinstance(item, StreamLost):
                    self._lost = True
                    yield MinaraUpdate(broken=Broken(item.reason))
                elif isinstance(item, StreamResumed):
                    self._lost = False
                    yield MinaraUpdate(recovered=Recovered(complete=True))
                elif isinstance(item, StreamStale):
                    self._lost = False
                    update, ended = await self._rebuild_after_stale(outgoing, item)
                    yield update
                    if ended:
                        return
                    partial = True
                elif isinstance(item, StreamRefused):
                    notice = NoticePart(
                        item.reason, level="warning", retryable=False, kind="malformed"
                    )
                    yield MinaraUpdate(self.conversation.add_part(notice))
            # The iteration ended without the turn's end: stop_waiting() was called.
            if self._stop_requested:
                yield self._gave_up(
                    _("You stopped waiting; the gateway may still finish the answer."),
                    pending=True,
                )
        except UnauthorizedError:
            raise
        except TalkieError as error:
            if outgoing is None or not outgoing.delivered:
                raise
            yield self._gave_up(error.message, pending=error.retryable)
        finally:
            self._lost = False
            self._subscription = None
            await subscription.aclose()

    def _refuse_version(
        self,
        outgoing: MinaraOutgoing | None,
        error: UnsupportedProtocolVersion,
        event: Mapping[str, Any],
        seq: int,
    ) -> MinaraUpdate:
        change = self.conversation.fail(error.message, code="unsupported_protocol_version")
        if outgoing is not None:
            outgoing.failure = Failure(error.message, code="unsupported_protocol_version")
        return MinaraUpdate(change, event, seq)

    def _gave_up(self, reason: str, *, pending: bool) -> MinaraUpdate:
        """The answer will not come on this stream: what arrived stays, marked as cut off."""
        change = self.conversation.cut_off(reason)
        return MinaraUpdate(
            change, recovered=Recovered(complete=False, reason=reason, pending=pending)
        )

    async def _rebuild_after_stale(
        self, outgoing: MinaraOutgoing | None, stale: StreamStale
    ) -> tuple[MinaraUpdate, bool]:
        """Events were missed: rebuild from the rows; True when the turn is there, ended."""
        try:
            await self.rebuild()
        except TalkieError as error:
            return self._gave_up(f"{stale.reason} {error.message}", pending=True), True
        self.streaming = False
        answer = self._answered(outgoing.message_id) if outgoing is not None else None
        if answer is not None:
            self._settle_from_rows(outgoing, answer)
            return MinaraUpdate(recovered=Recovered(complete=True)), True
        # The turn still runs: its events from `first_seq` follow (from the live buffer).
        self.conversation.discard_open_answer()
        return MinaraUpdate(recovered=Recovered(complete=True)), False

    async def _rebuild_at_end(self, outgoing: MinaraOutgoing | None) -> MinaraUpdate | None:
        """The turn rebuilt while it ran has ended: what it said before the missed events is
        only in its row, so the whole answer is loaded from the rows (the gateway stores the
        row before it sends the end). None when they do not hold it: the live fold stands."""
        kept = self.conversation, self.last_seq, self.streaming
        try:
            await self.rebuild()
        except TalkieError:
            answer = None
        else:
            if outgoing is not None:
                answer = self._answered(outgoing.message_id)
            else:
                turns = self.conversation.turns
                last = turns[-1] if turns else None
                answer = last if last is not None and last.role == "assistant" else None
        if answer is None or answer.state == "streaming" or self.streaming:
            self.conversation, self.last_seq, self.streaming = kept
            return None
        self._settle_from_rows(outgoing, answer)
        return MinaraUpdate(recovered=Recovered(complete=True))

    # --- the older revision: the turn in the POST's event stream -------------------------

    async def _read_sse(
        self, outgoing: MinaraOutgoing, answer: SseTurn
    ) -> AsyncIterator[MinaraUpdate]:
        """Read a turn answered as `text/event-stream`: the same `{type, data}` events."""
        reason: str | None = None
        try:
            async with answer:
                async for event in answer.events():
                    if event.get("type") == "start":
                        data = event.get("data")
                        session_id = data.get("session_id") if isinstance(data, Mapping) else None
                        if isinstance(session_id, str) and session_id:
                            outgoing.thread_id = session_id
                    try:
                        change = self.conversation.apply(event)
                    except UnsupportedProtocolVersion as error:
                        yield self._refuse_version(outgoing, error, event, 0)
                        return
                    yield MinaraUpdate(change, event)
                    if self._settle(outgoing, event):
                        return
        except EventTooLarge as error:
            yield self._gave_up(error.message, pending=False)
            return
        except TalkieError as error:
            reason = error.message
        reason = reason or _("The gateway closed the answer's stream before its end.")
        yield MinaraUpdate(broken=Broken(reason))
        yield await self._recover_sse(outgoing, reason)

    async def _recover_sse(self, outgoing: MinaraOutgoing, reason: str) -> MinaraUpdate:
        """Look at the session until the answer is stored, then show it (older revision)."""
        session_id = outgoing.thread_id
        self._lost, self._stop_requested = True, False
        try:
            for delay in SSE_RECOVERY_DELAYS if session_id else ():
                await self._sleep(delay)
                if self._stop_requested:
                    break
                with contextlib.suppress(TalkieError):
                    assert session_id is not None
                    detail = await self.client.session(session_id)
                    if not detail.is_streaming:
                        previous = self.conversation
                        self._adopt(detail)
                        answer = self._answered(outgoing.message_id)
                        if answer is not None:
                            self._settle_from_rows(outgoing, answer)
                            return MinaraUpdate(recovered=Recovered(complete=True))
                        self.conversation = previous
        finally:
            self._lost = False
        text = _("{reason} The answer is not in the session yet.").format(reason=reason)
        return self._gave_up(text, pending=True)
