"""A thread in the person's list with what waits in it and what they chose about it: its
unread count, pinned, muted, archived, blocked (a Cuckoo hub's conversations say so)."""

from __future__ import annotations

from talkie_tui.protocol.talkie.models import Thread

__all__ = ["MarkedThread"]


class MarkedThread(Thread):
    """A thread with marks beside its title in the list (a plain `Thread` has none)."""

    unread: int = 0
    # The person's choices about the thread's agent: first in the list, no unread count
    # shown, under "Archived", and blocked (its conversation takes no messages).
    pinned: bool = False
    muted: bool = False
    archived: bool = False
    blocked: bool = False
