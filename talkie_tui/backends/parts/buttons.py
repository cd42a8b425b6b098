"""Buttons on messages, tapped by the person (`capabilities.buttons`): a Cuckoo hub's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from talkie_tui.backends.session import Outgoing, Session

__all__ = ["TakesTaps", "TapsAsMessages"]


@runtime_checkable
class TakesTaps(Protocol):
    """A backend that takes a tap on a button of a message (`capabilities.buttons`)."""

    async def tap(self, session: Session[Any], message_id: str, button_id: str) -> None:
        """Tap a button of the message `message_id` (the server sends it as the person)."""
        ...


@runtime_checkable
class TapsAsMessages(Protocol):
    """A session that sends a tap like a message, so the reply to it is followed as an
    answer (`Session.send` takes what `prepare_tap` gives)."""

    def prepare_tap(self, message_id: str, button_id: str) -> Outgoing:
        """A tap of a button of the message `message_id`, ready for `send`."""
        ...
