"""The person's deliberate move to a decision (the decision standard): Ctrl+O, and its checks."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.screen import Screen

from talkie_tui.ui.widgets.decision import DecisionView
from tests.ui.flows import until

__all__ = ["reach"]


async def reach(pilot: Pilot[None], screen: Screen[object], view: DecisionView) -> None:
    """Press Ctrl+O until the focus is in `view` (nothing took it there by itself)."""
    assert screen.focused is None or screen.focused not in view.query("*")
    for _press in range(8):  # Ctrl+O goes round the open decisions in order
        await pilot.press("ctrl+o")
        if view.has_focus_within:
            return
    await until(pilot, lambda: view.has_focus_within)
