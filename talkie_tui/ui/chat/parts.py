"""The chat screen's controllers that the controllers of a message and of a thread work with.

Sending a message, Retry, opening a thread and following it live each reach several of the
screen's other controllers (what goes with a message, where it is kept, what belongs to the
thread on screen); `ChatParts` names them once. Only controllers that need none of these four
are named here, so that no import goes round in a loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from talkie_tui.ui.chat.attaching import PendingAttachments
    from talkie_tui.ui.chat.call_controller import CallController
    from talkie_tui.ui.chat.decisions import Decisions
    from talkie_tui.ui.chat.dictation import Dictation
    from talkie_tui.ui.chat.drafts import ComposerDrafts
    from talkie_tui.ui.chat.model_choice import ThreadModels
    from talkie_tui.ui.chat.outbox import Outbox
    from talkie_tui.ui.chat.reach import Reach
    from talkie_tui.ui.chat.replies import Replies
    from talkie_tui.ui.chat.status import ServerStatus
    from talkie_tui.ui.chat.steering import Steering
    from talkie_tui.ui.chat.threads import Threads

__all__ = ["ChatParts"]


class ChatParts(Protocol):
    """The screen's controllers, by the names the screen gives them (`ChatScreen` has them)."""

    attachments: PendingAttachments
    decisions: Decisions
    dictation: Dictation
    drafts: ComposerDrafts
    models: ThreadModels
    outbox: Outbox
    reach: Reach
    replies: Replies
    status: ServerStatus
    steering: Steering
    threads: Threads
    voice: CallController
