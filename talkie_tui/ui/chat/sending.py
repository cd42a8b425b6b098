"""Sending a message from the chat screen and showing its answer as it streams; stopping it.

The composer's Enter comes here (`submit`). `/attach PATH` is a command, never a message. While
an answer runs, a message goes into it where the server takes that (`Steering`), else it waits.
Otherwise it takes the files uploaded for it, the thread's model, the audio it was dictated from
and the message it answers, and stays in the outbox until the server has it. `send` streams the
answer in the screen's "run" worker; a failure keeps the message, not delivered, with Retry (one
refused outright comes back into an empty composer). Esc stops the answer (`stop`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from talkie_tui.core.errors import RateLimitedError, TalkieError, UnauthorizedError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.attaching import attach_command
from talkie_tui.ui.chat.drafts import NEW
from talkie_tui.ui.chat.host import ChatHost, run_answer
from talkie_tui.ui.chat.parts import ChatParts

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Backend, Outgoing, Update
    from talkie_tui.ui.chat.header_state import HeaderState
    from talkie_tui.ui.widgets.attachment_tray import Pending

__all__ = ["SendHost", "Sending"]


class SendHost(ChatHost, ChatParts, Protocol):
    """What sending needs of the chat screen; `ChatScreen` is one."""

    def show_update(self, update: Update) -> None:
        """Show one step of the answer."""

    def refresh_threads(self) -> None:
        """Reload the thread list (the message may have made a thread)."""


class Sending:
    """The messages of one chat screen, on their way, and the answer streaming in."""

    def __init__(self, host: SendHost, backend: Backend, state: HeaderState) -> None:
        self._host = host
        self._backend = backend
        self._state = state  # says "answering" while the answer comes in
        self.request: Outgoing | None = None  # the run in flight, or the last failed one
        self.files: list[Pending] = []  # the files that went with it

    # --- what the composer sends ---------------------------------------------------------

    def submit(self, text: str) -> None:
        """Enter in the composer: a command, an interjection, or a message with its extras."""
        host = self._host
        if host.voice.holds_composer():
            return
        path = attach_command(text)
        if path is not None:  # a command, never a message
            self._attach_command(path)
            return
        if host.answering:
            if host.steering.available:  # into the running answer: the agent reads it now
                host.steering.interject(text)
                host.composer.clear()
                return
            host.notify(
                _("Wait for the answer, or press Esc to stop it."),
                severity="warning",
                markup=False,
            )
            return
        attachments = host.attachments
        if attachments.offered and (reason := attachments.not_ready()):
            host.notify(reason, severity="warning", markup=False)
            return
        files = attachments.take() if attachments.offered else []
        extras = self.extras(files, host.dictation.extras()) | host.replies.extras()
        request = host.session.prepare(text, **extras)
        host.outbox.hold(host.session.thread_id, request.message_id, text)
        host.composer.clear()
        host.drafts.put("")
        host.drafts.save()
        if host.replies.target is not None:
            host.replies.cancel()  # the quote goes with the message: its turn shows it
            host.transcript.anchor()  # to the message sent, wherever the one answered was
        self.send(request, files)

    def extras(self, files: list[Pending], dictated: dict[str, Any]) -> dict[str, Any]:
        """What goes with a message besides its text, for what the server offers: its files,
        the thread's model, the audio it was dictated from (nothing for a Talkie server)."""
        host = self._host
        extras: dict[str, Any] = dict(dictated)
        if host.attachments.offered:
            extras["attachments"] = host.attachments.attachments(files)
        return extras | host.models.extras()

    def _attach_command(self, path: str) -> None:
        """`/attach PATH`: the file joins the next message, and the command leaves the box."""
        host = self._host
        if not path:
            host.notify(_("Write the file's path after /attach."), severity="warning", markup=False)
            return
        if host.attachments.add(Path(path)):
            host.composer.clear()
            host.drafts.put("")

    def send_text(self, text: str) -> None:
        """Send `text` as a new message of the thread on screen (a queued interjection)."""
        host = self._host
        request = host.session.prepare(text)
        host.outbox.hold(host.session.thread_id, request.message_id, text)
        self.send(request)

    # --- the answer ----------------------------------------------------------------------

    def send(self, request: Outgoing, files: list[Pending] | None = None) -> Worker[None]:
        """Send a message (with the files taken for it) and show the answer as it streams."""
        return run_answer(self._host, partial(self._send, request, files), "send")

    async def _send(self, request: Outgoing, files: list[Pending] | None) -> None:
        host = self._host
        self.request = request
        self.files = files or []
        delivered = taken = False  # the whole answer came; the server has the message
        conversation = host.session.conversation
        with self._state.answer():
            try:
                async for update in host.session.send(request):
                    if host.session.conversation is not conversation:
                        conversation = host.session.conversation
                    if not taken and update.change is not None and update.recovered is None:
                        taken = self._taken(request)  # a step of the answer: the server has it
                    host.show_update(update)
                delivered = taken or self._taken(request)  # taken once: its outbox entry goes
                host.status.reached()  # "connected" only after a real exchange
            except TalkieError as error:
                host.status.failed(error)
                host.attachments.give_back(self.files)  # the next message's once more
                self._show_failure(request, error)
        if delivered:
            host.attachments.sent(self.files)
            host.dictation.forget()
        if conversation.usage:
            host.header.set_usage(conversation.usage)
        if request.settled:
            self.request = None
        thread_id = host.session.thread_id
        if host.drafts.key == NEW and thread_id and host.session.conversation is conversation:
            host.drafts.switch(thread_id, restore=False)  # the new thread got its id
        host.refresh_threads()

    def _taken(self, request: Outgoing) -> bool:
        """The server has the message: it leaves the outbox, and its "not delivered" goes."""
        host = self._host
        host.outbox.taken(request.message_id)
        turn = host.session.conversation.turn(request.message_id)
        if turn is not None and turn.delivered():
            host.transcript.apply(turn)
        return True

    def _show_failure(self, request: Outgoing, error: TalkieError) -> None:
        """Keep the message: mark it not delivered, with the server's words and a retry."""
        host = self._host
        host.transcript.sync_turns()  # the failure may come before the message was shown
        # A refused sign-in is asked for again at once, and then Retry helps: not "Trying
        # again will not help" above the notice's own "Trying again may help".
        # A retryable failure's notice says "Trying again may help." beside its Retry: once.
        hint = (
            _("Retry once you are signed in again.")
            if isinstance(error, UnauthorizedError)
            else ("" if error.retryable else error.retry_hint)
        )
        turn = host.session.conversation.not_delivered(
            request.message_id,
            f"{error.message} {hint}".strip(),
            code=getattr(error, "code", None),
            retry_after=error.retry_after if isinstance(error, RateLimitedError) else None,
        )
        host.transcript.apply(turn)
        if not host.sign_in_needed(error) and not error.retryable:
            host.notify(error.message, severity="error", markup=False)
            self._keep_refused_text(request)

    def _keep_refused_text(self, request: Outgoing) -> None:
        """A message the server refused outright (a model it does not serve, a file it does
        not take) comes back into an empty composer with its files, to be changed and sent."""
        offers = self._backend.info.capabilities
        composer = self._host.composer
        if not (offers.attachments or offers.models) or composer.text.strip():
            return
        composer.load_text(request.text)
        composer.move_cursor(composer.document.end)
        self._host.drafts.put(request.text)

    # --- stopping ------------------------------------------------------------------------

    def stop(self, reattached: str | None) -> None:
        """Esc: stop the answer being streamed (cancelRun, §5), or the turn `reattached` to."""
        if not self._host.answering:
            return
        if self.request is not None:
            if self.request.run_id is not None:  # none yet: the server has not named the run
                self._cancel(self.request.run_id)
        elif reattached is not None:
            self._cancel(reattached)

    def _cancel(self, run_id: str) -> None:
        self._host.run_worker(
            partial(self._cancel_run, run_id),
            name="cancel_run",
            group="cancel",
            exit_on_error=False,
        )

    async def _cancel_run(self, run_id: str) -> None:
        """Ask the server to stop a run."""
        try:
            await self._backend.stop(run_id)
        except TalkieError as error:
            if self._host.sign_in_needed(error):
                return
            self._host.notify(
                _("Could not stop the answer: {error}").format(error=error.message),
                severity="warning",
                markup=False,
            )
