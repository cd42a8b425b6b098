"""Messages widgets post to the screen; the screen does the work (HTTP, browser, files)."""

from __future__ import annotations

from typing import Literal

from textual.message import Message
from textual.widget import Widget

from talkie_tui.chat.vocabulary import Action, FileBlock

__all__ = ["DecisionRequested", "DownloadRequested", "OpenLinkRequested", "RetryRequested"]


class OpenLinkRequested(Message):
    """The user clicked or pressed Enter on a link; the screen checks and opens it."""

    def __init__(self, url: str, label: str = "") -> None:
        super().__init__()
        self.url = url
        self.label = label


class DownloadRequested(Message):
    """The user asked to download a card's file block."""

    def __init__(self, block: FileBlock) -> None:
        super().__init__()
        self.block = block


class DecisionRequested(Message):
    """A person decided an action by a deliberate gesture (never a key already in flight)."""

    def __init__(
        self,
        action: Action,
        decision: Literal["confirm", "cancel"],
        card: Widget | None = None,
    ) -> None:
        super().__init__()
        self.action = action
        self.decision = decision
        self._card = card

    @property
    def control(self) -> Widget | None:
        """The action card that was decided: it shows the outcome, or why it failed."""
        return self._card


class RetryRequested(Message):
    """The user asked to retry a failed or retryable run."""
