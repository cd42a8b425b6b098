"""The start-up objects are frozen out of garbage collection once, after a collection."""

from __future__ import annotations

import pytest

from talkie_tui.ui.support import gc_tuning


def test_freezes_once_and_only_after_a_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(gc_tuning.gc, "collect", lambda: calls.append("collect"))
    monkeypatch.setattr(gc_tuning.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc_tuning.gc, "get_threshold", lambda: (700, 10, 10))
    monkeypatch.setattr(
        gc_tuning.gc, "set_threshold", lambda *limits: calls.append(f"threshold {limits}")
    )
    monkeypatch.setattr(gc_tuning, "_done", False)
    assert gc_tuning.freeze_startup_objects()
    assert not gc_tuning.freeze_startup_objects()
    assert calls == ["collect", "freeze", "threshold (700, 10, 100)"]
