"""Garbage collection in a long-running TUI: what exists once the chat is up is not scanned again.

A full collection visits every tracked object. Once the chat is up that is ~170,000 of them
(modules, classes, the stylesheet, the screens), and while an answer streams Textual allocates
enough per frame (Strips and their caches) to start a full collection every two seconds: each
a 100-300 ms pause (a visible stutter) and together a quarter of the client's CPU at 500 tokens
a second (benchmarks/terminal_stream.py). `gc.freeze()` moves every object alive to a
generation no collection visits, so only the session's own objects are scanned.

It is done once per process, after a collection (so no garbage is kept), and only in a real
terminal: a test process runs many apps, and would keep the first one's objects for good.

Full collections are then made ten times rarer. With Python's default thresholds a stream at
500 tokens a second still started one every three or four seconds, each 20-30 ms of scanning
the session's objects (a stutter when it falls between two frames) for little garbage: what a
stream leaves behind is freed by reference counting or by the young collections, which keep
their default pace.
"""

from __future__ import annotations

import gc

__all__ = ["FREEZE_DELAY", "FULL_COLLECTION_THRESHOLD", "freeze_startup_objects"]

FREEZE_DELAY = 1.0
"""Seconds after the chat screen opens: the connect screen is gone, the chat composed."""

FULL_COLLECTION_THRESHOLD = 100
"""Middle-generation collections before a full one (Python's default: 10)."""

_done = False


def freeze_startup_objects() -> bool:
    """Collect, then exclude every object alive from later collections; False if done before."""
    global _done
    if _done:
        return False
    _done = True
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_THRESHOLD)
    return True
