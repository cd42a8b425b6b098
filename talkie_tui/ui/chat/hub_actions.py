"""What a person does of their own on a hub, from the palette of the chat screen: change
their display name, hide the selected message for themselves, clear the conversation for
themselves (each risky one asks first, the safe answer focused), and the conversation's
schedules. The work runs in the chat screen's workers; the backend's parts (`ChangesOwn`,
`RunsSchedules`) speak to the hub."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from talkie_tui.backends.parts.own import ChangesOwn
from talkie_tui.backends.parts.schedules import RunsSchedules
from talkie_tui.chat.turns import Turn
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.name_prompt import LinePromptScreen

if TYPE_CHECKING:
    from talkie_tui.backends.session import Session
    from talkie_tui.ui.chat.screen import ChatScreen

__all__ = ["HubActions", "HubParts"]


@runtime_checkable
class HubParts(ChangesOwn, RunsSchedules, Protocol):
    """A backend whose person changes their own name and view, and whose agents run
    schedules (a Cuckoo hub's): what the hub's palette commands need."""


class HubActions:
    """The person's own changes on the hub of one chat screen."""

    def __init__(self, chat: ChatScreen, backend: HubParts) -> None:
        self.chat = chat
        self.backend = backend

    def earlier(self) -> None:
        """Load the conversation's earlier messages (as scrolling to its top does)."""
        self.chat.transcript.show_earlier()

    def _session(self) -> Session[Any]:
        return self.chat.session

    def _failed(self, error: TalkieError, what: str) -> None:
        if not self.chat.sign_in_needed(error):
            self.chat.notify(
                what.format(error=f"{error.message} {error.retry_hint}".strip()),
                severity="error",
                markup=False,
            )

    # --- the display name ----------------------------------------------------------------

    def rename(self) -> None:
        """Ask for a new display name, then give it to the hub."""
        user = self.backend.user
        prompt = LinePromptScreen(
            _("Your name, as agents and people on the hub see it"),
            user.name if user is not None and user.name else "",
            max_length=self.backend.max_display_name,
        )

        def chosen(name: str | None) -> None:
            if name:
                self.chat.run_worker(self._rename(name), group="hub-account", exit_on_error=False)

        self.chat.app.push_screen(prompt, chosen)

    async def _rename(self, name: str) -> None:
        try:
            user = await self.backend.rename(name)
        except TalkieError as error:
            self._failed(error, _("Your name was not changed: {error}"))
            return
        self.chat.notify(_("The hub now calls you {name}.").format(name=user.name), markup=False)
        self.chat.status.load()  # the header's "signed in as"

    # --- hiding ----------------------------------------------------------------------------

    def hide_selected(self) -> None:
        """Hide the message selected in the transcript for the person, after asking."""
        session = self._session()
        turn = self.chat.transcript.selected
        if turn is None or not turn.id.startswith("msg_"):
            self.chat.notify(
                _("Select a message first (Shift+↑ in the conversation)."),
                severity="warning",
                markup=False,
            )
            return
        preview = " ".join(turn.text.split())[:120]

        def answered(hide: bool | None) -> None:
            if hide:
                self.chat.run_worker(
                    self._hide(session, turn), group="hub-hiding", exit_on_error=False
                )

        self.chat.app.push_screen(
            ConfirmScreen(
                _("Hide this message for you?"),
                _("“{text}” leaves your conversation on every device; the agent keeps it.").format(
                    text=preview
                ),
                confirm_label=_("Hide"),
                danger=True,
            ),
            answered,
        )

    async def _hide(self, session: Session[Any], turn: Turn) -> None:
        try:
            await self.backend.hide_for_me(session, turn)
        except TalkieError as error:
            self._failed(error, _("The message was not hidden: {error}"))
            return
        if self.chat.session is session:
            self.chat.transcript.select(None)
            self.chat.transcript.sync_turns()

    def clear(self) -> None:
        """Clear the open conversation for the person, after asking."""
        session = self._session()
        if session.thread_id is None:
            self.chat.notify(_("Open a conversation first."), severity="warning", markup=False)
            return

        def answered(clear: bool | None) -> None:
            if clear:
                self.chat.run_worker(self._clear(session), group="hub-hiding", exit_on_error=False)

        self.chat.app.push_screen(
            ConfirmScreen(
                _("Clear this conversation for you?"),
                _(
                    "Every message so far leaves it, on all your devices; the agent keeps them. "
                    "New messages still come."
                ),
                confirm_label=_("Clear"),
                danger=True,
            ),
            answered,
        )

    async def _clear(self, session: Session[Any]) -> None:
        try:
            await self.backend.clear_for_me(session)
        except TalkieError as error:
            self._failed(error, _("The conversation was not cleared: {error}"))
            return
        if self.chat.session is session:
            self.chat.transcript.show(session.conversation)
        self.chat.refresh_threads()

    # --- schedules -----------------------------------------------------------------------

    def schedules(self) -> None:
        """Show the open conversation's schedules."""
        from talkie_tui.ui.screens.schedules import SchedulesScreen  # only when asked for

        session = self._session()
        if session.thread_id is None:
            self.chat.notify(_("Open a conversation first."), severity="warning", markup=False)
            return
        agent = next(
            (t.author for t in reversed(session.conversation.turns) if t.role == "assistant"),
            None,
        )
        schedules = self.backend.schedules(session.thread_id)
        self.chat.app.push_screen(SchedulesScreen(schedules, agent or _("the agent")))
