"""The messages the bridge sends for one event (`Reply`), and a streaming message (`Stream`).

Every message of a reply carries an idempotency key made from the event id (`evt_…:n`, n
counting the reply's messages, which a replayed run sends in the same order), so a redelivered
event finds its messages already made. A reply's text streams (`stream.start`, `stream.delta`
batched every `flush_interval`, `stream.end`, or their HTTP routes: `ops.HubOps`); a text
past `STREAM_CHARS`, or one the hub finished early (idle), goes on in a new message; a card is
a message of its fallbackText and fields with URL buttons; an action is a message with
Confirm / Cancel.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from talkie_tui.core.waiting import wait_event
from talkie_tui.i18n import N_

from . import render
from .hub import OpFailed

if TYPE_CHECKING:
    from talkie_tui.protocol.models import Action, Card

    from .cuckoo import CuckooBridge
    from .ops import HubOps

__all__ = ["STREAM_CHARS", "Reply", "Stream"]

STREAM_CHARS = 7800
"""A reply's text past this goes on in a new message (the hub clamps a stream at 8000)."""


class Stream:
    """One streaming message: deltas batched and sent every `interval` (the first at once)."""

    def __init__(
        self, ops: HubOps, message_id: str, *, interval: float, skip: int, done: bool
    ) -> None:
        self.ops = ops
        self.message_id = message_id
        self.interval = interval
        self.skip = skip  # characters the hub already has (a replay of a cut-off reply)
        self.done = done  # the hub has it complete: a replay sends nothing more
        self.stopped = False
        self.closed_early = False  # finished by the hub (idle, too long), not by the bridge
        self.chars = skip
        self.whole: list[str] = []  # every text given, as the hub should hold it
        self._buffer: list[str] = []
        self._wake = asyncio.Event()
        self._closing = asyncio.Event()
        self._task = asyncio.ensure_future(self._pump())

    def add(self, text: str) -> None:
        if self.closed_early:
            self.whole.append(text)  # kept for the message that carries on (`_carry_on`)
            return
        if self.done or self.stopped:
            return
        self.whole.append(text)
        self.chars += len(text)
        if self.skip:
            cut = min(self.skip, len(text))
            text, self.skip = text[cut:], self.skip - cut
        if text:
            self._buffer.append(text)
            self._wake.set()

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            chunk = "".join(self._buffer)
            self._buffer.clear()
            if chunk and not self.stopped and not await self.ops.append(self.message_id, chunk):
                self._buffer.insert(0, chunk)  # the hub out of reach: sent once it is back
                await self.ops.wait_ready()
                self._wake.set()
                continue
            if self._closing.is_set() and not self._buffer:
                return
            # Paced: the next batch after `interval`, or at once when the reply ends.
            await wait_event(self._closing, self.interval)

    async def end(self, buttons: list[list[render.Button]] | None = None) -> None:
        """Send what is buffered, then finish the message (with `buttons` at its end)."""
        self._closing.set()
        self._wake.set()
        await self._task
        if self.done or self.stopped:
            return
        try:
            message = await self.ops.finish(self.message_id, buttons)
            body = message.get("body") if isinstance(message.get("body"), dict) else {}
            held = body.get("text") if isinstance(body, dict) else None
            if message.get("stopped") is True:
                self.stopped = True
            elif isinstance(held, str) and len(held) < len("".join(self.whole)):
                # The hub had finished it (idle) and answered the end with it as it was.
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
        self, bridge: CuckooBridge, event_id: str, conversation_id: str, reply_to: str | None
    ) -> None:
        self.bridge = bridge
        self.ops = bridge.ops
        self.event_id = event_id
        self.conversation_id = conversation_id
        self.reply_to = reply_to
        self.count = 0
        self.stream: Stream | None = None
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
        while delta:
            if self.stream is None:
                await self._start_stream()
            stream = self.stream
            assert stream is not None
            if stream.closed_early:  # the hub finished it meanwhile: a new message carries on
                await self._carry_on(stream)
                continue
            room = STREAM_CHARS - stream.chars
            if room <= 0:
                await self.end_stream()
                continue
            stream.add(delta[:room])
            delta = delta[room:]

    async def _start_stream(self) -> None:
        message = await self.ops.start_stream(self.conversation_id, self._fields())
        body = message.get("body") if isinstance(message.get("body"), dict) else {}
        assert isinstance(body, dict)
        already = body.get("text") if isinstance(body.get("text"), str) else ""
        assert isinstance(already, str)
        self.stream = Stream(
            self.ops,
            str(message.get("id") or ""),
            interval=self.bridge.flush_interval,
            skip=len(already),
            done=message.get("status") == "complete",
        )
        self.bridge.keep(self.stream._task)

    async def end_stream(self, buttons: list[list[render.Button]] | None = None) -> None:
        for _attempt in range(5):
            stream = self.stream
            if stream is None:
                return
            if not stream.closed_early:
                await stream.end(buttons)
                if not stream.closed_early:
                    self.stream = None
                    return
            await self._carry_on(stream)  # the hub had finished it: the rest goes on anew
        self.stream = None

    async def _carry_on(self, stream: Stream) -> None:
        """The hub finished `stream` early: what it did not take starts a new message."""
        await stream.end()  # lets the pacing task go; nothing more is sent to it
        self.stream = None
        stored = await self.bridge.api.message_text(self.conversation_id, stream.message_id)
        whole = "".join(stream.whole)
        carry = whole[len(stored) :] if stored is not None and whole.startswith(stored) else ""
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
        buttons = render.card_buttons(card, self.bridge.backend.resolve_url, self.bridge.speak)
        await self.send(render.card_text(card), buttons)

    async def action(self, action: Action) -> None:
        self.actions += 1
        key = render.action_key(action.id)
        expires = action.expires_at.timestamp() if action.expires_at is not None else None
        self.bridge.state.keep_action(key, action.id, self.conversation_id, expires)
        speak = self.bridge.speak
        await self.send(
            render.action_text(action, speak), render.action_buttons(action, key, speak)
        )

    def stop(self) -> None:
        """The person stopped the reply: nothing more is sent for it."""
        self.stopped = True
        if self.stream is not None:
            self.stream.stopped = True

    async def close(self) -> None:
        """The reply is complete: the stream ends with the answer's links as buttons."""
        links = render.url_rows(self.links)
        if self.stream is not None:
            await self.end_stream(links or None)
        elif links and not self.stopped:
            await self.send(self.bridge.speak(N_("Links:")), links)
        if not self.stopped:
            await self.activity("idle")

    def abandon(self) -> None:
        if self.stream is not None:
            self.stream.cancel()
