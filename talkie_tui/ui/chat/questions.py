"""The agent's questions on the chat screen: answered and settled.

The screen routes the question views' `AnswerRequested` and `SecretProvided` here, and hands on
every change the answer's stream shows. An answer goes to the backend (`Answers`) in a worker
while its view is busy; the backend's "answered" settles the question as answered, its
"not_pending" (answered in another client, or timed out) settles it quietly as "elsewhere", or
"timeout" once `expires_at` has passed. A failure shows the server's words and whether trying
again helps, and the view takes answers again. The conversation is the only writer of the
question parts: this controller settles them through `Conversation.settle_question`.

A question never takes the focus by itself (the decision standard, widgets/decision.py): it
waits for Ctrl+O, and one closed while the focus was in it gives the focus back itself.
"""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING

from talkie_tui.backends.base import AnswerOutcome, Answers
from talkie_tui.chat.turns import QuestionPart
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.widgets.question import QuestionView, expires_at

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from talkie_tui.backends.base import Backend
    from talkie_tui.chat.conversation import Change
    from talkie_tui.ui.messages import AnswerRequested, SecretProvided, SecretValue

__all__ = ["Questions"]

ANSWER_SHOWN_CHARS = 60  # of a typed answer, on the closed question's line


class Questions:
    """The answers to the agent's questions on one chat screen."""

    def __init__(
        self, host: ChatHost, backend: Backend, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._host = host
        self._backend = backend
        self._clock = clock

    # --- answering -----------------------------------------------------------------------

    def requested(self, event: AnswerRequested) -> None:
        """A view was answered: send the answers."""
        view = event.control if isinstance(event.control, QuestionView) else None
        answers = event.answers
        said = "; ".join(", ".join(chosen) for chosen in answers if chosen)
        if len(said) > ANSWER_SHOWN_CHARS:
            said = said[: ANSWER_SHOWN_CHARS - 1] + "…"
        self._run(
            event.question,
            view,
            lambda backend: backend.answer(event.question, answers),
            said or None,
        )

    def provided(self, event: SecretProvided) -> None:
        """A secret was typed (or declined): write it where the question says, never keep it."""
        view = event.control if isinstance(event.control, QuestionView) else None
        secret = event.secret
        self._run(event.question, view, partial(_provide, event.question, secret))

    def _run(
        self,
        question: QuestionPart,
        view: QuestionView | None,
        call: Callable[[Answers], Awaitable[AnswerOutcome]],
        answered_with: str | None = None,
    ) -> None:
        self._host.run_worker(
            partial(self._answer, question, view, call, answered_with),
            name="answer",
            group="questions",
            exit_on_error=False,
        )

    async def _answer(
        self,
        question: QuestionPart,
        view: QuestionView | None,
        call: Callable[[Answers], Awaitable[AnswerOutcome]],
        answered_with: str | None,
    ) -> None:
        """Send an answer and show how it went (`answered_with`: the answer in words)."""
        conversation = self._host.session.conversation
        backend = self._backend
        if view is not None:
            view.set_busy(True)
        if not isinstance(backend, Answers):
            if view is not None:
                view.show_error(_("This server does not take answers to questions."))
            return
        try:
            outcome = await call(backend)
        except TalkieError as error:
            self._host.sign_in_needed(error)
            if view is not None:
                view.show_error(
                    _("Your answer did not go through: {message} {hint}").format(
                        message=error.message, hint=error.retry_hint
                    )
                )
            return
        if outcome == "not_pending":
            expiry = expires_at(question)
            late = expiry is not None and self._clock() >= expiry
            closed = "timeout" if late else "elsewhere"
        else:
            closed = "answered"
            # The stream may have closed the question already (pending_question_resolved
            # comes as the answer is taken): the words go on whichever part is shown.
            for part in {question, conversation.questions.get(question.question_id)}:
                if part is not None:
                    part.answered_with = answered_with
        settled = conversation.settle_question(question.question_id, closed)
        if conversation is self._host.session.conversation:
            self._show(settled or question)

    def _show(self, part: QuestionPart) -> None:
        """Draw a question's new state (a closed one gives back the focus it held)."""
        host = self._host
        host.transcript.apply(part)
        view = host.transcript.view_of_part(part)
        if isinstance(view, QuestionView):
            view.refresh_part()  # also when the part was settled already (busy no more)

    # --- what the answer's stream shows --------------------------------------------------

    def changed(self, change: Change) -> None:
        """A step of the answer changed `change`: a question the server closed is redrawn."""
        if isinstance(change, QuestionPart) and change.outcome is not None:
            self._host.call_after_refresh(self._show, change)


async def _provide(
    question: QuestionPart, secret: SecretValue | None, backend: Answers
) -> AnswerOutcome:
    """Hand the secret to the backend, taken out of its wrapper only here."""
    return await backend.provide_secret(question, secret.take() if secret is not None else None)
