"""The actions of a thread (§8) on the chat screen: decided, followed, reached by Ctrl+O.

The screen routes the action cards' `DecisionRequested` and Ctrl+O (to the next decision still
open: an action, a question of the agent, a hub's buttons or quick replies) here, and hands on
what the voice call reports: a decision made by voice and the actions of a voice tool. A
decision is sent, its outcome shown on the card (and its result cards as an answer); an action
that is `running` is asked for again when its undo window ends, and when it ended `done` the
thread is reloaded, because what the window let through is posted into the thread by the
server. Nothing here takes the focus by itself (the decision standard, widgets/decision.py):
a new card announces itself and waits for Ctrl+O.

A button and the consent window of a call race for the same action: the call controller says
when the voice already decided it, and then the button does nothing.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, Protocol

from talkie_tui.backends.parts.actions import Decides
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.widgets.action_card import ActionCard, explain_decision_error
from talkie_tui.ui.widgets.decision import DecisionView

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend
    from talkie_tui.chat.conversation import Conversation
    from talkie_tui.chat.vocabulary import Action, DecisionResult
    from talkie_tui.ui.chat.call_controller import CallController
    from talkie_tui.ui.messages import DecisionRequested

__all__ = ["FOLLOW_CHECKS", "DecisionHost", "Decisions"]

FOLLOW_CHECKS = 10  # how often a still-running action is asked for before we stop asking


class DecisionHost(ChatHost, Protocol):
    """What the actions need of the screen they are shown on; `ChatScreen` is one."""

    def open_thread(self, thread_id: str) -> object:
        """Load the stored thread again (a result card the server posted is in it)."""


class Decisions:
    """The decisions on the actions of one chat screen, by button or by voice."""

    def __init__(self, host: DecisionHost, backend: Backend, call: CallController) -> None:
        self._host = host
        self._backend = backend
        self._decides = backend if isinstance(backend, Decides) else None  # talkie/1's part
        self._call = call  # the consent window may have decided already; a call holds the thread

    # --- deciding ------------------------------------------------------------------------

    def requested(self, event: DecisionRequested) -> None:
        """A card's button (or key) asks for a decision: send it, unless the voice decided."""
        card = event.control if isinstance(event.control, ActionCard) else None
        if self._call.decided_by_voice(event.action.id, event.decision):
            if card is not None:
                card.set_busy(False)
            return
        self._host.run_worker(
            partial(self._decide, event, card),
            name="decide",
            group="decisions",
            exit_on_error=False,
        )

    async def _decide(self, event: DecisionRequested, card: ActionCard | None) -> None:
        """Send a human decision and show its outcome."""
        conversation = self._host.session.conversation
        decides = self._decides
        if decides is None:
            return  # no actions here: no card asks for a decision
        if card is not None:
            card.set_busy(True)
        try:
            result = await decides.decide(event.action, event.decision, "button")
        except TalkieError as error:
            self._host.sign_in_needed(error)
            if card is not None:
                card.set_busy(False)
                card.show_error(explain_decision_error(error))
            await self.refresh_open(conversation)
            return
        self.show(conversation, result, card)

    def show(
        self, conversation: Conversation, result: DecisionResult, card: ActionCard | None = None
    ) -> None:
        """Show a decision's outcome (by button or by voice): the card, and result cards."""
        host = self._host
        changes = conversation.apply_decision(result)
        if conversation is host.session.conversation:
            host.transcript.sync_turns()  # result cards come as a new answer
            host.transcript.apply(changes[0])
        if card is not None:
            card.set_busy(False)
            card.update_action(result.action)  # decided: a card with the focus gives it back
        self._follow_running(result.action)

    # --- the server's word on an action --------------------------------------------------

    async def refresh_open(self, conversation: Conversation) -> None:
        """Ask the server for the current state of actions shown as open (§8 GET action)."""
        decides = self._decides
        for part in list(conversation.actions.values()):
            if decides is None or not part.action.is_open:
                continue
            try:
                fresh = await decides.action(part.action.id)
            except TalkieError:
                continue
            self._host.transcript.apply(conversation.update_action(fresh))

    def _follow_running(self, action: Action, checks_left: int = FOLLOW_CHECKS) -> None:
        """A `running` action ends on the server after its undo window: ask for it then."""
        if action.status != "running" or checks_left <= 0:
            return
        deadline = action.undo_until.timestamp() if action.undo_until else time.time()
        delay = max(1.0, deadline - time.time() + 0.5)
        self._host.set_timer(delay, lambda: self._refresh_later(action.id, checks_left - 1))

    def _refresh_later(self, action_id: str, checks_left: int) -> None:
        self._host.run_worker(
            partial(self._refresh, action_id, checks_left),
            name="refresh_action",
            group="decisions",
            exit_on_error=False,
        )

    async def _refresh(self, action_id: str, checks_left: int) -> None:
        """Show the server's current state of one action (§8 GET action)."""
        decides = self._decides
        if decides is None:
            return
        try:
            fresh = await decides.action(action_id)
        except TalkieError:
            return
        host = self._host
        conversation = host.session.conversation
        before = conversation.actions.get(action_id)
        was_running = before is not None and before.action.status == "running"
        host.transcript.apply(conversation.update_action(fresh))
        self._follow_running(fresh, checks_left)
        # What an undo window let through is posted into the thread by the server (§8 names
        # no event for it), so the result card comes from the stored thread.
        thread_id = conversation.thread_id
        if was_running and fresh.status == "done" and thread_id and not self._busy_elsewhere:
            host.open_thread(thread_id)

    @property
    def _busy_elsewhere(self) -> bool:
        """True while an answer streams or a call is on: reloading the thread would cut in."""
        return self._host.answering or self._call.call is not None

    # --- the focus: reached only on purpose ---------------------------------------------

    def focus_pending(self) -> None:
        """Ctrl+O: the focus to the next decision still open, in the order of the transcript."""
        host = self._host
        pending = [view for view in host.transcript.query(DecisionView) if view.decidable]
        if not pending:
            offers = self._backend.info.capabilities
            asks = offers.questions or offers.buttons
            none = _("Nothing is waiting for your answer.") if asks else None
            host.notify(none or _("No action is waiting for a decision."), markup=False)
            return
        index = next((i + 1 for i, view in enumerate(pending) if view.has_focus_within), 0)
        pending[index % len(pending)].take_focus()
