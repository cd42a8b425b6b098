"""The messages the bridge sends for one event (`Reply`), and a streaming message (`Stream`).

Every message of a reply carries an idempotency key made from the event id (`evt_…:n`, n
counting the reply's messages, which a replayed run sends in the same order), so a redelivered
event finds its messages already made. A reply's text streams (`stream.start`, `stream.delta`
batched every `flush_interval`, `stream.end`, or their HTTP routes: `ops.HubOps`); a long text
goes on in a new message at a paragraph break, cut where `split.Splitter` says (from the text
alone, so a replay cuts it the same); a message the hub finished early (idle), or whose delta
it dropped, goes on in a new message too; a card is a message of its fallbackText and fields
with URL buttons; an action is a message with Confirm / Cancel.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from talkie_tui.bridge import render
from talkie_tui.bridge.split import Chunk, Splitter, fence_at
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.waiting import wait_event
from talkie_tui.i18n import N_
from talkie_tui.protocol.cuckoo.agent_client import OpFailed

if TYPE_CHECKING:
    from talkie_tui.bridge.context import BridgeContext
    from talkie_tui.bridge.ops import HubOps
    from talkie_tui.protocol.talkie.cards import Card
    from talkie_tui.protocol.talkie.models import Action

__all__ = ["REFUSED_PAUSE", "Reply", "Stream"]

logger = logging.getLogger(__name__)

REFUSED_PAUSE = 0.5
"""Seconds a stream waits after the hub dropped one of its deltas (`rate_limited` on the
socket, which answers a delta only when it fails) before it reads what the hub holds and sends
the rest again: a stream refused stays at about two deltas a second until the hub takes them."""
READ_ATTEMPTS = 3
"""Reads of what the hub holds after a dropped delta before the reply fails (and the hub sends
the event again: its replay sends only what the hub does not have)."""


def _common(one: str, other: str) -> int:
    """The length of the longest common prefix of two texts."""
    size = min(len(one), len(other))
    if one[:size] == other[:size]:
        return size
    low, high = 0, size  # one[:low] == other[:low], and not so at high
    while high - low > 1:
        middle = (low + high) // 2
        if one[:middle] == other[:middle]:
            low = middle
        else:
            high = middle
    return low


class Stream:
    """One streaming message: deltas batched and sent every `interval` (the first at once).

    `held` is the text the hub already has (a replay of a reply cut off) and `done` that it has
    the message complete, so that a replay sends nothing more to it; `cut_short` that the
    person did not stop it: if it holds less than this message's text (the hub finished it
    early the first time, or dropped its last delta), the rest goes on in a new message, as it
    did the first time (`Reply._carry_on`). `read` reads the text the hub holds.
    """

    def __init__(
        self,
        ops: HubOps,
        message_id: str,
        *,
        interval: float,
        read: Callable[[], Awaitable[str | None]],
        held: str = "",
        done: bool = False,
        cut_short: bool = False,
    ) -> None:
        self.ops = ops
        self.message_id = message_id
        self.interval = interval
        self.read = read
        self.held = held
        self.skip = len(held)  # characters the hub already has
        self.done = done  # the hub has it complete: a replay sends nothing more
        self.cut_short = cut_short
        self.stopped = False
        self.closed_early = False  # finished by the hub (idle, too long), not by the bridge
        self.whole: list[str] = []  # every text given, as the hub should hold it
        self._given: list[str] = [held]  # the text the hub has or was sent, in order
        self._buffer: list[str] = []
        self._refused = False
        self._wake = asyncio.Event()
        self._closing = asyncio.Event()
        self._task = asyncio.ensure_future(self._pump())

    def add(self, text: str) -> None:
        if self.stopped:
            return
        self.whole.append(text)  # kept for the message that carries on (`_carry_on`)
        if self.closed_early or self.done:
            return
        if self.skip:
            cut = min(self.skip, len(text))
            text, self.skip = text[cut:], self.skip - cut
        if text:
            self._buffer.append(text)
            self._wake.set()

    def refused(self) -> None:
        """The hub dropped a delta of this message (`rate_limited`): see `_mend`."""
        self._refused = True
        self._wake.set()

    async def _pump(self) -> None:
        clock = asyncio.get_running_loop().time
        sent_at = -self.interval
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._refused:
                if self.stopped or self.closed_early:
                    self._refused = False  # nothing more goes to it anyway
                else:
                    await self._mend()
            chunk = "".join(self._buffer)
            self._buffer.clear()
            if chunk and not (self.stopped or self.closed_early):
                sent_at = clock()
                if not await self.ops.append(self.message_id, chunk):
                    self._buffer.insert(0, chunk)  # the hub out of reach: sent once it is back
                    await self.ops.wait_ready()
                    self._wake.set()
                    continue
                self._given.append(chunk)
            if self._closing.is_set() and not self._buffer and not self._refused:
                return
            # Paced: the next batch `interval` after this one went (however long sending it
            # took), or at once when the reply ends.
            await wait_event(self._closing, max(0.0, sent_at + self.interval - clock()))

    async def _mend(self) -> None:
        """After a pause, what the hub holds decides what goes again: the text sent after it,
        as the next delta; or, when it took a delta sent after the one it dropped (a gap in
        the middle), nothing more: the message ends and the text from the gap on goes on in a
        new one (`Reply._carry_on`), some of it twice but none lost."""
        await asyncio.sleep(REFUSED_PAUSE)
        self._refused = False  # what the hub dropped before the read shows in it
        held = await self._read()
        given = "".join(self._given)
        if held is None:  # not among the conversation's newest messages: taken as whole
            logger.warning("stream %s: its text could not be read after a drop", self.message_id)
        elif given.startswith(held):
            if len(held) < len(given):
                self._buffer.insert(0, given[len(held) :])
            self._given = [held]
        else:
            logger.warning("stream %s: the hub's text has a gap; it goes on anew", self.message_id)
            self.closed_early = True
            self._buffer.clear()

    async def _read(self) -> str | None:
        for _attempt in range(READ_ATTEMPTS - 1):
            try:
                return await self.read()
            except TalkieError:
                await asyncio.sleep(REFUSED_PAUSE)
        return await self.read()

    async def end(self, buttons: list[list[render.Button]] | None = None) -> None:
        """Send what is buffered, then finish the message (with `buttons` at its end)."""
        self._closing.set()
        self._wake.set()
        await self._task
        if self.stopped:
            return
        whole = "".join(self.whole)
        if self.done:
            # A replay: the message was cut short the first time; the rest went on anew.
            if self.cut_short and len(self.held) < len(whole):
                self.closed_early = True
            return
        try:
            message = await self.ops.finish(self.message_id, buttons)
            body = message.get("body") if isinstance(message.get("body"), dict) else {}
            held = body.get("text") if isinstance(body, dict) else None
            if message.get("stopped") is True:
                self.stopped = True
            elif isinstance(held, str) and len(held) < len(whole):
                # The hub had finished it (idle), or dropped its last delta, and answered the
                # end with it as it was.
                self.closed_early = True
        except OpFailed as error:
            if error.code == "stopped":
                self.stopped = True
            elif error.code == "not_streaming":
                self.closed_early = True  # finished by the hub before the bridge did
            else:
                raise
        self.done = True

    def cancel(self) -> None:
        self._task.cancel()


class Reply:
    """Everything sent for one event, in order, each message with its idempotency key."""

    def __init__(
        self, context: BridgeContext, event_id: str, conversation_id: str, reply_to: str | None
    ) -> None:
        self.context = context
        self.ops = context.ops
        self.event_id = event_id
        self.conversation_id = conversation_id
        self.reply_to = reply_to
        self.schedule_id: str | None = None  # every message names the schedule it runs for
        self.count = 0
        self.stream: Stream | None = None
        self.splitter = Splitter()
        self.links: list[render.Button] = []
        self.sent_text: list[str] = []
        self.stopped = False
        self.cards = 0
        self.actions = 0

    def _key(self) -> str:
        key = f"{self.event_id}:{self.count}"
        self.count += 1
        return key

    def _fields(self) -> dict[str, Any]:
        """The next message's idempotency key, and the quote of the person's for the first."""
        fields: dict[str, Any] = {"idempotency_key": self._key()}
        if self.schedule_id is not None:
            fields["schedule_id"] = self.schedule_id
        if self.reply_to is not None:
            fields["reply_to"] = self.reply_to
            self.reply_to = None  # the first message of the reply quotes the person's
        return fields

    async def activity(self, state: str, label: str | None = None) -> None:
        if self.stopped:
            return
        await self.ops.activity(self.conversation_id, state, label)

    async def text(self, delta: str) -> None:
        if self.stopped or not delta:
            return
        self.sent_text.append(delta)
        await self._write(self.splitter.feed(delta))

    async def _write(
        self, chunks: list[Chunk], buttons: list[list[render.Button]] | None = None
    ) -> bool:
        """Send the splitter's chunks; the last message they end gets `buttons`. Whether the
        last chunk ended a message."""
        ended = False
        for index, chunk in enumerate(chunks):
            if self.stopped:
                return False
            if chunk.text:
                if self.stream is not None and self.stream.closed_early:
                    await self._carry_on(self.stream)  # the hub finished it: a new one goes on
                if self.stream is None:
                    await self._start_stream()
                assert self.stream is not None
                self.stream.add(chunk.text)
            if chunk.ends:
                last = index == len(chunks) - 1
                ended = await self._close_stream(buttons if last else None) and last
        return ended

    async def _start_stream(self) -> None:
        message = await self.ops.start_stream(self.conversation_id, self._fields())
        body = message.get("body") if isinstance(message.get("body"), dict) else {}
        assert isinstance(body, dict)
        already = body.get("text") if isinstance(body.get("text"), str) else ""
        assert isinstance(already, str)
        message_id = str(message.get("id") or "")
        complete = message.get("status") == "complete"
        conversation_id = self.conversation_id
        api = self.context.api
        self.stream = Stream(
            self.ops,
            message_id,
            interval=self.context.flush_interval,
            read=lambda: api.message_text(conversation_id, message_id),
            held=already,
            done=complete,
            cut_short=complete and message.get("stopped") is not True,
        )
        self.context.keep(self.stream._task)

    async def end_stream(self, buttons: list[list[render.Button]] | None = None) -> bool:
        """End the message being streamed, with the text held back for it and `buttons` at its
        end (before a tool's work, a card, an action or the reply's end); the text after
        begins a new message. Whether there was one to end."""
        ended = await self._write(self.splitter.finish(), buttons)
        if self.stream is not None:
            ended = await self._close_stream(buttons)
        return ended

    async def _close_stream(self, buttons: list[list[render.Button]] | None = None) -> bool:
        for _attempt in range(5):
            stream = self.stream
            if stream is None:
                return False
            if not stream.closed_early:
                await stream.end(buttons)
                if not stream.closed_early:
                    self.stream = None
                    return True
            await self._carry_on(stream)  # the hub had finished it: the rest goes on anew
        self.stream = None
        return False

    async def _carry_on(self, stream: Stream) -> None:
        """The hub finished `stream` early (or dropped a delta in its middle): the text it
        does not have starts a new message, which opens again a fenced code block the text
        it has left open."""
        await stream.end()  # lets the pacing task go; nothing more is sent to it
        self.stream = None
        stored = await self.context.api.message_text(self.conversation_id, stream.message_id)
        if stored is None:
            return
        whole = "".join(stream.whole)
        same = _common(whole, stored)
        carry = whole[same:]
        fence = fence_at(whole[:same])
        if fence is not None and carry:
            if carry.strip() == fence.run:
                return  # only the line closing the block was left
            carry = fence.reopen + carry
        if carry:
            await self._start_stream()
            assert self.stream is not None
            self.stream.add(carry)

    async def send(self, text: str, buttons: list[list[render.Button]] | None = None) -> None:
        """A whole message (after the streaming one, which ends first)."""
        if self.stopped:
            return
        await self.end_stream()
        fields = self._fields()
        fields["text"] = text
        if buttons:
            fields["buttons"] = buttons
        await self.ops.send(self.conversation_id, fields)

    async def card(self, card: Card) -> None:
        self.cards += 1
        buttons = render.card_buttons(card, self.context.backend.resolve_url, self.context.speak)
        await self.send(render.card_text(card), buttons)

    async def action(self, action: Action) -> None:
        self.actions += 1
        key = render.action_key(action.id)
        expires = action.expires_at.timestamp() if action.expires_at is not None else None
        self.context.state.keep_action(key, action.id, self.conversation_id, expires)
        speak = self.context.speak
        await self.send(
            render.action_text(action, speak), render.action_buttons(action, key, speak)
        )

    def stop(self) -> None:
        """The person stopped the reply: nothing more is sent for it."""
        self.stopped = True
        if self.stream is not None:
            self.stream.stopped = True

    async def close(self) -> None:
        """The reply is complete: the last message ends with the answer's links as buttons
        (or, when it had ended already, they follow in a message of their own)."""
        links = render.url_rows(self.links)
        ended = await self.end_stream(links or None)
        if links and not ended and not self.stopped:
            await self.send(self.context.speak(N_("Links:")), links)
        if not self.stopped:
            await self.activity("idle")

    def abandon(self) -> None:
        if self.stream is not None:
            self.stream.cancel()
