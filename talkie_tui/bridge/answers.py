"""The conversations' messages: each answered from the conversation's Talkie thread.

- the person's message is the run's message, with the hub's `msg_` id as its id, so a second
  run of the same message replays the first (talkie/1 §5) instead of answering again;
- the answer's text streams; a tool's label shows as `working` activity; a card is a message
  of its own; an action is a message with Confirm / Cancel (`reply.Reply`); a tap on one is a
  decision (`decisions.Decisions`);
- `stop.requested` cancels the run; a stranger gets one "this agent is private" reply.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from talkie_tui.bridge import render
from talkie_tui.bridge.reply import Reply
from talkie_tui.bridge.voice_notes import VoiceReplies, voice_note_of
from talkie_tui.chat.turns import ActionPart, CardPart, LinkPart, TextPart, ToolPart
from talkie_tui.core.errors import ServerError, TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import N_, _, ngettext

if TYPE_CHECKING:
    from talkie_tui.bridge.context import BridgeContext
    from talkie_tui.bridge.decisions import Decisions

__all__ = ["PRIVATE_TEXT", "Answers"]

PRIVATE_TEXT = N_(
    "Sorry, this agent is private: it answers only the people its operator named. "
    "Nothing you write here is passed on."
)


@dataclass(slots=True)
class _Run:
    reply: Reply
    run_id: Callable[[], str | None]
    stopped: bool = False


class Answers:
    """The runs that answer the people's messages, one at a time per conversation."""

    def __init__(self, context: BridgeContext, decisions: Decisions) -> None:
        self.context = context
        self.decisions = decisions
        self.runs: dict[str, _Run] = {}
        # One run at a time in a conversation: a person's message, a schedule's instruction.
        self._turns: collections.defaultdict[str, asyncio.Lock] = collections.defaultdict(
            asyncio.Lock
        )
        self.voice_replies = VoiceReplies(context)

    def abandon(self) -> None:
        """The bridge stops: the streams' pacing tasks go."""
        for run in self.runs.values():
            run.reply.abandon()

    def delta_failed(self, message_id: str, code: str) -> None:
        """The hub refused a `stream.delta` of a run's reply (it answers only failures)."""
        for conversation_id, run in list(self.runs.items()):
            stream = run.reply.stream
            if stream is None or stream.message_id != message_id:
                continue
            if code == "stopped":
                self.stop_run(conversation_id)
            elif code == "rate_limited":
                stream.refused()  # read again after a pause, and what the hub lacks sent again
            elif code == "not_streaming":
                # The hub finished it (idle, or open too long): the text goes on in a new one.
                stream.done = stream.closed_early = True
                self.context.warn(
                    _(
                        "{conversation}: the hub closed a reply early; it goes on in a new message"
                    ).format(conversation=conversation_id)
                )
            else:
                self.context.warn(_("hub refused a part of a reply ({code})").format(code=code))

    # --- messages ---------------------------------------------------------------------

    async def message(self, event_id: str, conversation_id: str, message: dict[str, Any]) -> None:
        """A person's `message.created`: answered, or a tap decided, or a stranger told."""
        if self.context.state.has_left(conversation_id, since=message.get("created_at")):
            return
        sender = message.get("sender") if isinstance(message.get("sender"), dict) else {}
        assert isinstance(sender, dict)
        if sender.get("kind") != "user":
            return
        person = str(sender.get("id") or "")
        name = clean_text(str(sender.get("display_name") or person))
        served = self.context.served
        assert served is not None
        if person not in served.allowed:
            await self._private(conversation_id, person, name)
            return
        body = message.get("body") if isinstance(message.get("body"), dict) else {}
        assert isinstance(body, dict)
        message_id = str(message.get("id") or "")
        reply = Reply(self.context, event_id, conversation_id, None)
        tap = body.get("action")
        if isinstance(tap, dict):
            await self.decisions.tap(reply, tap, name)
            return
        text = body.get("text") if isinstance(body.get("text"), str) else ""
        assert isinstance(text, str)
        text = text.strip()
        if not text:
            if (note := voice_note_of(body)) is not None and self.voice_replies.offered:
                await self.voice_replies.answer(event_id, conversation_id, message_id, note)
            elif body.get("attachments"):
                await reply.send(
                    self.context.speak(N_("This agent reads text only: files are not passed on."))
                )
            return
        limit = self.context.backend.info.max_message_chars
        if len(text) > limit:
            await reply.send(
                self.context.speak(
                    N_("That message is longer than this agent takes ({limit} characters).")
                ).format(limit=limit)
            )
            return
        reply.reply_to = message_id
        async with self._turns[conversation_id]:
            await self._answer(reply, conversation_id, message_id, text, name)

    async def instruction(
        self, conversation_id: str, key: str, text: str, schedule_id: str, title: str
    ) -> None:
        """A schedule's run: its instruction answered as a message would be, `key` the run's
        message id and its messages' idempotency keys, each message sent for the schedule."""
        reply = Reply(self.context, key, conversation_id, None)
        reply.schedule_id = schedule_id
        name = _("schedule “{title}”").format(title=title)  # who asked, in the log
        async with self._turns[conversation_id]:
            await self._answer(reply, conversation_id, key, text, name)

    async def _private(self, conversation_id: str, person: str, name: str) -> None:
        if self.context.state.told_private(conversation_id):
            return
        await self.context.ops.send(
            conversation_id,
            {
                "text": self.context.speak(PRIVATE_TEXT),
                "idempotency_key": f"private:{conversation_id}",
            },
        )
        self.context.state.mark_told_private(conversation_id)
        self.context.say(
            _(
                "{name} ({person}) in {conversation} is not served: told the agent is private"
            ).format(name=name, person=person, conversation=conversation_id)
        )

    async def _answer(
        self, reply: Reply, conversation_id: str, message_id: str, text: str, name: str
    ) -> None:
        started = time.monotonic()
        thread_id = self.context.state.thread_of(conversation_id)
        session = self.context.backend.new_session(thread_id)
        outgoing = session.again(text, message_id)
        if thread_id is None and outgoing.thread_id:
            self.context.state.set_thread(conversation_id, outgoing.thread_id)
        run = _Run(reply, lambda: outgoing.run_id)
        self.runs[conversation_id] = run
        seen_actions: set[str] = set()
        failure: str | None = None
        try:
            await reply.activity("thinking")
            async for update in session.send(outgoing):
                if run.stopped:
                    continue
                change = update.change
                delta = update.delta
                if isinstance(change, TextPart) and delta:
                    await reply.text(delta)
                elif isinstance(change, ToolPart) and change.state == "running":
                    # The text so far is one message: a tool may take longer than the hub
                    # keeps a quiet stream open (30 s), and what follows is a new message.
                    await reply.end_stream()
                    label = render.activity_label(change.label)
                    await reply.activity("working", label)
                elif isinstance(change, CardPart):
                    await reply.card(change.card)
                elif isinstance(change, ActionPart) and update.proposes_action:
                    if change.action.id not in seen_actions:
                        seen_actions.add(change.action.id)
                        await reply.action(change.action)
                elif isinstance(change, LinkPart):
                    button = render.link_button(
                        change.link.label, change.link.url, self.context.backend.resolve_url
                    )
                    if button is not None:
                        reply.links.append(button)
                recovered = update.recovered
                if recovered is not None and recovered.complete:
                    await self._send_recovered(reply, session.conversation.turns)
        except TalkieError as error:
            failure = str(error) if isinstance(error, ServerError) else error.message
        finally:
            if self.runs.get(conversation_id) is run:
                del self.runs[conversation_id]
        if outgoing.thread_id and outgoing.thread_id != thread_id:
            self.context.state.set_thread(conversation_id, outgoing.thread_id)
        if failure is None and outgoing.failure is not None:
            failure = outgoing.failure.message
            if outgoing.failure.code:
                failure += f" ({outgoing.failure.code})"
        if failure is not None and not run.stopped:
            await reply.send(
                self.context.speak(N_("The agent could not answer: {words}")).format(words=failure)
            )
        await reply.close()
        took = time.monotonic() - started
        what = _("stopped") if run.stopped else (_("failed") if failure else _("answered"))
        extras = []
        if reply.cards:
            extras.append(ngettext("{n} card", "{n} cards", reply.cards).format(n=reply.cards))
        if reply.actions:
            extras.append(
                ngettext("{n} action", "{n} actions", reply.actions).format(n=reply.actions)
            )
        self.context.say(
            _("{conversation}: {name}: “{text}” → {what}{extras} in {seconds:.1f} s").format(
                conversation=conversation_id,
                name=name,
                text=render.clip(text, 50),
                what=what,
                extras=f" ({', '.join(extras)})" if extras else "",
                seconds=took,
            )
        )
        if failure is not None:
            self.context.warn(
                _("{conversation}: {words}").format(conversation=conversation_id, words=failure)
            )

    async def _send_recovered(self, reply: Reply, turns: list[Any]) -> None:
        """The stream broke and the thread gave the whole answer: send what was not sent."""
        answer = turns[-1] if turns and turns[-1].role == "assistant" else None
        if answer is None:
            return
        sent = "".join(reply.sent_text)
        full = answer.text
        await reply.text(full[len(sent) :] if full.startswith(sent) else "\n\n" + full)

    # --- stop -------------------------------------------------------------------------

    def stop_run(self, conversation_id: str) -> bool:
        run = self.runs.get(conversation_id)
        if run is None or run.stopped:
            return False
        run.stopped = True
        run.reply.stop()
        run_id = run.run_id()
        if run_id is not None:
            self.context.spawn(self._cancel(run_id))
        return True

    async def _cancel(self, run_id: str) -> None:
        try:
            await wait_within(self.context.backend.stop(run_id), timeout=10)
        except (TalkieError, TimeoutError) as error:
            self.context.warn(
                _("could not stop run {run}: {words}").format(run=run_id, words=error)
            )

    async def stop(self, conversation_id: str) -> None:
        if self.stop_run(conversation_id):
            self.context.say(
                _("{conversation}: stopped on the person's request").format(
                    conversation=conversation_id
                )
            )
