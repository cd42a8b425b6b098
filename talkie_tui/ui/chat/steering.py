"""Steering a running answer (servers with `capabilities.interjections`, e.g. Minara gateways).

A message sent while the agent works goes into the running turn; the server echoes it into the
turn where the agent took it in. When no turn runs any more (the server's 409) it waits for the
current answer to end and is sent as the next message. The messages the agent did not take in
before it finished (`Turn.pending_interjections`) are sent again as ordinary messages, visibly,
each once, one after the other.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import TYPE_CHECKING, Protocol

from talkie_tui.backends.base import Steers
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend
    from talkie_tui.chat.conversation import Conversation

__all__ = ["Steering", "SteeringHost"]


class SteeringHost(ChatHost, Protocol):
    """What steering needs of the chat screen."""

    def send_text(self, text: str) -> None:
        """Send `text` as a new message of the thread on screen."""


class Steering:
    """Interjections into the running answer, and the messages waiting to be sent after it."""

    def __init__(self, host: SteeringHost, backend: Backend) -> None:
        self._host = host
        self._backend = backend
        self._queue: deque[str] = deque()

    @property
    def available(self) -> bool:
        """True when the server takes messages into a running answer."""
        return self._backend.info.capabilities.interjections and isinstance(self._backend, Steers)

    @property
    def waiting(self) -> list[str]:
        """The messages to be sent, in order, once the answer on screen has ended."""
        return list(self._queue)

    def interject(self, text: str) -> None:
        """Send `text` into the running answer (in a worker)."""
        self._host.run_worker(
            partial(self._interject, text),
            name="interject",
            group="interject",
            exit_on_error=False,
        )

    async def _interject(self, text: str) -> None:
        host = self._host
        assert isinstance(self._backend, Steers)
        try:
            taken = await self._backend.interject(host.session, text)
        except TalkieError as error:
            if host.sign_in_needed(error):
                return
            # Not lost: it goes as the next message, like a 409's.
            host.notify(
                _(
                    "Could not send it into the answer ({error}); it follows as a new message."
                ).format(error=error.message),
                severity="warning",
                markup=False,
            )
            taken = False
        if taken:
            host.notify(_("Sent into the running answer."), markup=False)
            return
        self._queue.append(text)
        if not host.answering:
            self.send_next()

    def answer_ended(self, conversation: Conversation) -> None:
        """The answer on screen ended: queue what it did not take in, then send the next."""
        late = conversation.take_pending_interjections()
        if late:
            self._queue.extend(late)
            self._host.notify(
                _(
                    "The agent finished before it read {count} of your messages: sending again."
                ).format(count=len(late)),
                markup=False,
            )
        self.send_next()

    def send_next(self) -> None:
        """Send the first waiting message, if there is one and nothing is being answered."""
        if self._queue and not self._host.answering:
            self._host.send_text(self._queue.popleft())
