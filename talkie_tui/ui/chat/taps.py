"""Buttons and quick replies under a hub agent's messages, on the chat screen.

The screen routes the views' `TapRequested` and `QuickReplyChosen` here. A button with an id is
tapped while its row is busy: where the session prepares taps (`TapsAsMessages`, a Cuckoo
session: the hub sends a tap as the person's message, the button's label) it goes through the
screen's `send` like a message, so the agent's reply is followed as any answer is; otherwise,
and while an answer still runs, through the backend (`TakesTaps`) in a worker. Either way
the hub marks the button taken, so the row shows it chosen and the others disabled. A failure
shows why, and the row takes taps again after its guard.

A button with a URL is a link: `https`/`http` go to the screen's link rules (`OpenLinkRequested`,
the same path as every link: opened only now, on this gesture); `tel:` and `upi:` (a call, a
payment) are copied and shown, never opened; anything else is refused, said so.

A quick reply sends its words as the next message, exactly as if typed.
"""

from __future__ import annotations

import contextlib
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from talkie_tui.backends.parts.buttons import TakesTaps, TapsAsMessages
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.messages import OpenLinkRequested
from talkie_tui.ui.widgets.buttons import COPIED_SCHEMES, ButtonsView, QuickRepliesView, url_scheme

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Backend
    from talkie_tui.chat.turns import ButtonsPart, MessageButton
    from talkie_tui.ui.messages import QuickReplyChosen, TapRequested

__all__ = ["TapHost", "Taps"]


class TapHost(ChatHost, Protocol):
    """What taps need of the screen they are shown on; `ChatScreen` is one."""

    def send_text(self, text: str) -> None:
        """Send `text` as a new message of the thread on screen."""

    def send(self, request: Any) -> Worker[None]:
        """Send a prepared message of the session and follow its answer."""


class Taps:
    """The buttons and quick replies of one chat screen."""

    def __init__(self, host: TapHost, backend: Backend) -> None:
        self._host = host
        self._backend = backend

    # --- buttons ---------------------------------------------------------------------------

    def requested(self, event: TapRequested) -> None:
        """A button was pressed (past its guard): tap it, or follow its link."""
        view = event.control if isinstance(event.control, ButtonsView) else None
        button = event.button
        if button.url is not None:
            self._link(button)
            return
        if button.button_id is None:
            return
        session = self._host.session
        if isinstance(session, TapsAsMessages) and not self._host.answering:
            self._tap_as_message(session, button.button_id, event.part, view)
            return
        # While an answer runs (its last messages may still come after the buttons), the tap
        # goes straight to the hub: the running answer follows the conversation and shows the
        # tap and what the agent says to it.
        self._host.run_worker(
            partial(self._tap, event.part, button, view),
            name="tap",
            group="taps",
            exit_on_error=False,
        )

    def _tap_as_message(
        self,
        session: TapsAsMessages,
        button_id: str,
        part: ButtonsPart,
        view: ButtonsView | None,
    ) -> None:
        """Send the tap like a message, the agent's reply followed as an answer."""
        host = self._host
        worker = host.send(session.prepare_tap(part.source_message_id, button_id))
        host.run_worker(
            partial(self._after_tap, worker, view),
            name="tap",
            group="taps",
            exit_on_error=False,
        )

    async def _after_tap(self, worker: Worker[None], view: ButtonsView | None) -> None:
        """The tap's send ended: the row shows the button taken, or takes taps again."""
        with contextlib.suppress(Exception):  # the send's failure is shown by the screen
            await worker.wait()
        host = self._host
        host.transcript.refresh_buttons()
        if view is None or not view.is_attached:
            return
        if view.taken is None:
            view.show_error(_("Your choice did not go through; you can tap again."))
            return
        view.refresh_part()  # taken: a row that held the focus gives it back

    async def _tap(
        self, part: ButtonsPart, button: MessageButton, view: ButtonsView | None
    ) -> None:
        host = self._host
        session = host.session
        backend = self._backend
        assert button.button_id is not None
        if not isinstance(backend, TakesTaps) or not backend.info.capabilities.buttons:
            if view is not None:
                view.show_error(_("This server does not take taps on buttons."))
            return
        try:
            await backend.tap(session, part.source_message_id, button.button_id)
        except TalkieError as error:
            host.sign_in_needed(error)
            if view is not None:
                view.show_error(
                    _("Your choice did not go through: {message} {hint}").format(
                        message=error.message, hint=error.retry_hint
                    )
                )
            return
        if view is not None:
            view.show_taken(button.button_id)
        if session is host.session:
            host.transcript.sync_turns()  # the tap, as the person's message
            host.transcript.refresh_buttons()
            host.show_state()

    def _link(self, button: MessageButton) -> None:
        """A URL button: open `https`/`http` by the link rules, copy `tel:`/`upi:`."""
        url = button.url or ""
        scheme = url_scheme(url)
        host = self._host
        if scheme in ("https", "http"):
            host.post_message(OpenLinkRequested(url, button.label))
        elif scheme in COPIED_SCHEMES:
            address = clean_text(url.strip())
            host.app.copy_to_clipboard(address)
            host.notify(
                _("Copied {address}: it is not opened from here.").format(address=address),
                markup=False,
            )
        else:
            host.notify(
                _("Not opened ({reason}): {url}").format(
                    reason=_("{scheme}: links are not opened").format(scheme=scheme or "?"),
                    url=clean_text(url),
                ),
                severity="warning",
                markup=False,
            )

    # --- quick replies ---------------------------------------------------------------------

    def chosen(self, event: QuickReplyChosen) -> None:
        """A quick reply: its words go as the next message."""
        host = self._host
        view = event.control if isinstance(event.control, QuickRepliesView) else None
        if host.answering:
            host.notify(
                _("Wait for the answer, or press Esc to stop it."),
                severity="warning",
                markup=False,
            )
            if view is not None:
                view.reopen()
            return
        host.send_text(event.text)
        host.composer.focus()
