"""Decisions on Talkie actions from the hub's buttons, and actions followed to their end.

A tap on Confirm / Cancel (a person's gesture in the app) is the decision, `method: "button"`
(talkie/1 §8). A high-risk action takes a second step in the hub itself, so that a person on
the hub's own app is as safe as one in talkie: its Confirm is answered with the question and
buttons of `render.sure_buttons`, and only "Yes, do it" confirms.

A confirmed outbound action may stay `running` until its `undoUntil` (its Undo
button cancels it until then); the Talkie server turns it `done` lazily and posts its result
card into the thread, with no event anyone is sent. So the bridge follows it: a second after
`undoUntil` it reads the action again (`GET action`) and tells the person how it ended — the
result card(s) the thread gained at the end of the window as messages, else a line saying it
was done or failed. The actions followed are in the state file, so a restart picks them up.

A sent message keeps its buttons (the hub cannot take them back): an Undo tapped after the
window is answered with a polite "too late" and where the action is.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from talkie_tui.bridge import render
from talkie_tui.bridge.reply import Reply
from talkie_tui.bridge.state import Follow
from talkie_tui.chat.turns import CardPart
from talkie_tui.core.errors import ServerError, TalkieError
from talkie_tui.i18n import N_, _

if TYPE_CHECKING:
    from talkie_tui.bridge.context import BridgeContext
    from talkie_tui.protocol.talkie.cards import Card
    from talkie_tui.protocol.talkie.models import Action

__all__ = ["FOLLOW_GRACE", "Decisions"]

logger = logging.getLogger(__name__)

FOLLOW_GRACE = 1.0
"""Seconds after `undoUntil` before the action is read again (the server's clock may lag)."""
FOLLOW_RETRY = (2.0, 5.0, 15.0, 60.0, 300.0)
"""Seconds before reading it again while the server still says `running` or cannot answer."""
_ENDED = ("done", "failed", "cancelled", "expired")


class Decisions:
    """The bridge's buttons on actions: taps decided, undo windows followed."""

    def __init__(self, context: BridgeContext) -> None:
        self.context = context
        self._following: dict[str, asyncio.Task[None]] = {}

    # --- taps ---------------------------------------------------------------------------

    async def tap(self, reply: Reply, tap: dict[str, Any], name: str) -> None:
        """A person tapped a button of a message: decide the action it names."""
        context = self.context
        speak = context.speak
        parsed = render.parse_action_button(tap.get("button_id"))
        if parsed is None:
            return  # not one of the bridge's buttons
        key, decision = parsed
        decides = context.decides
        kept = context.state.action(key)
        if decides is None or kept is None or kept.conversation_id != reply.conversation_id:
            await reply.send(
                speak(N_("That button does not belong to an action of this conversation."))
            )
            return
        try:
            action = await decides.action(kept.action_id)
            if decision == "cancel" and action.status in ("done", "failed"):
                # An Undo after its window (the button stays on the sent message).
                await self._too_late(reply, key, action, name)
                return
            if decision == "confirm" and action.risk_level == "high" and action.status == "pending":
                await reply.send(render.sure_text(action, speak), render.sure_buttons(key, speak))
                return
            decision = "confirm" if decision == "sure" else decision
            result = await decides.decide(action, decision, "button")
        except TalkieError as error:
            words = str(error) if isinstance(error, ServerError) else error.message
            await reply.send(speak(N_("Nothing was decided: {words}")).format(words=words))
            context.warn(
                _("{conversation}: decision on {action} refused: {words}").format(
                    conversation=reply.conversation_id, action=kept.action_id, words=words
                )
            )
            return
        decided = result.action
        undo = None
        if decision == "confirm" and decided.status == "running" and decided.undo_until:
            undo = render.undo_buttons(key, decided.undo_until.timestamp(), speak)
        await reply.send(render.decided_text(decided, decision, speak), undo)
        for card in render.cards_of(result.events):
            await reply.card(card)
        self._settle(key, kept.action_id, reply.conversation_id, decided)
        context.say(
            _("{conversation}: {name} chose {decision} on {action} → {status}").format(
                conversation=reply.conversation_id,
                name=name,
                decision=decision,
                action=kept.action_id,
                status=decided.status,
            )
        )

    async def _too_late(self, reply: Reply, key: str, action: Action, name: str) -> None:
        await reply.send(render.too_late_text(action, self.context.speak))
        self.context.state.mark_action_ended(key)
        self.context.say(
            _("{conversation}: {name} tapped Undo on {action} too late → {status}").format(
                conversation=reply.conversation_id,
                name=name,
                action=action.id,
                status=action.status,
            )
        )

    def _settle(self, key: str, action_id: str, conversation_id: str, action: Action) -> None:
        """What a decision left: an action in its undo window is followed, an ended one is
        forgotten in a day."""
        state = self.context.state
        if action.status in _ENDED:
            state.mark_action_ended(key)
            state.drop_follow(key)
            following = self._following.pop(key, None)
            if following is not None:
                following.cancel()  # undone in time: the Undo's reply said it all
            return
        state.mark_action_decided(key)
        if action.status == "running" and action.undo_until is not None:
            follow = Follow(key, action_id, conversation_id, action.undo_until.timestamp())
            state.keep_follow(follow)
            self.follow(follow)

    # --- following actions in their undo window -----------------------------------------

    def resume(self) -> None:
        """Follow again every action the state file says is followed (after a restart)."""
        for follow in self.context.state.follows():
            self.follow(follow)

    def follow(self, follow: Follow) -> None:
        """Tell the person how the action ends, once the Talkie server has it end."""
        if follow.key in self._following and not self._following[follow.key].done():
            return
        task = asyncio.ensure_future(self._follow(follow))
        self._following[follow.key] = task
        self.context.keep(task)
        task.add_done_callback(lambda done: self._forget(follow.key, done))

    def _forget(self, key: str, task: asyncio.Task[None]) -> None:
        if self._following.get(key) is task:
            del self._following[key]

    async def _follow(self, follow: Follow) -> None:
        context = self.context
        delay = follow.undo_until + FOLLOW_GRACE - time.time()
        retries = iter(FOLLOW_RETRY)
        while True:
            if delay > 0:
                await asyncio.sleep(delay)
            decides = context.decides
            if decides is None:
                return  # only a backend with actions proposes them
            try:
                action = await decides.action(follow.action_id)
            except TalkieError as error:
                if not error.retryable:
                    context.warn(
                        _("{conversation}: could not follow {action}: {words}").format(
                            conversation=follow.conversation_id,
                            action=follow.action_id,
                            words=error,
                        )
                    )
                    context.state.drop_follow(follow.key)
                    return
                delay = next(retries, FOLLOW_RETRY[-1])
                continue
            if action.status in _ENDED:
                break
            until = action.undo_until.timestamp() if action.undo_until else 0.0
            delay = max(until + FOLLOW_GRACE - time.time(), next(retries, FOLLOW_RETRY[-1]))
        for pause in (0.0, *FOLLOW_RETRY):
            await asyncio.sleep(pause)
            try:
                await self._tell_end(follow, action)
                break
            except TalkieError as error:
                # Tried again (the messages' keys make a second try harmless), and at the next
                # start if all tries fail.
                context.warn(
                    _("{conversation}: could not tell how {action} ended: {words}").format(
                        conversation=follow.conversation_id, action=follow.action_id, words=error
                    )
                )
        else:
            return
        context.state.mark_action_ended(follow.key)
        context.state.drop_follow(follow.key)
        context.say(
            _("{conversation}: {action} ended after its undo window → {status}").format(
                conversation=follow.conversation_id, action=follow.action_id, status=action.status
            )
        )

    async def _tell_end(self, follow: Follow, action: Action) -> None:
        """The result card(s) as messages, else a line; nothing in a conversation left."""
        context = self.context
        if context.state.has_left(follow.conversation_id):
            return
        # Keys `end:<key>:n`: a second try (a restart before the follow was dropped) finds the
        # messages already made.
        reply = Reply(context, f"end:{follow.key}", follow.conversation_id, None)
        cards = await self._result_cards(follow) if action.status == "done" else []
        if not cards:
            await reply.send(render.outcome_text(action, context.speak))
        for card in cards:
            await reply.card(card)

    async def _result_cards(self, follow: Follow) -> list[Card]:
        """The cards the thread gained when the undo window ended: those of the first answer
        stored at or after `undoUntil` that has any (the server posts the result there)."""
        thread_id = self.context.state.thread_of(follow.conversation_id)
        if thread_id is None:
            return []
        try:
            session = self.context.backend.new_session(thread_id)
            conversation = await session.load(thread_id)
        except TalkieError as error:
            logger.info("thread %s: %s", thread_id, error)
            return []
        since = follow.undo_until - 0.5  # the stored time may be rounded
        later = [
            turn
            for turn in conversation.turns
            if turn.role == "assistant"
            and turn.created_at is not None
            and turn.created_at.timestamp() >= since
            and any(isinstance(part, CardPart) for part in turn.parts)
        ]
        if not later:
            return []
        first = min(later, key=lambda turn: turn.created_at.timestamp() if turn.created_at else 0)
        return [part.card for part in first.parts if isinstance(part, CardPart)]
