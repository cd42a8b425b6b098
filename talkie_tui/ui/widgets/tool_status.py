"""One line per tool the agent runs: a spinner while it runs, then ✓ or ✗ with the error."""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget

from talkie_tui.chat.turns import ToolPart

__all__ = ["SPINNER_FRAMES", "ToolStatus"]

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
# 8 frames a second looks alive and costs one small repaint of one line per tick.
SPINNER_INTERVAL = 0.125
_ICONS = {"ok": "✓", "failed": "✗"}
_STATES = ("-running", "-ok", "-failed")


class ToolStatus(Widget):
    """The label of a tool call (`metadata.label`) and how it ended."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tool-status--icon",
        "tool-status--label",
        "tool-status--error",
    }

    def __init__(self, part: ToolPart, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="tool-status")
        self.part = part
        self._frame = 0
        self._spinner: Timer | None = None
        self._ready = False  # timers can start once mounted; `is_mounted` lags on_mount

    def on_mount(self) -> None:
        """Start the spinner if the tool is still running."""
        self._ready = True
        self.refresh_part()

    def refresh_part(self) -> None:
        """Re-render after the part changed; the spinner runs only while the tool does."""
        running = self.part.state == "running"
        for name in _STATES:
            self.set_class(name == f"-{self.part.state}", name)
        if running and self._spinner is None and self._ready:
            self._spinner = self.set_interval(SPINNER_INTERVAL, self._spin)
        elif not running and self._spinner is not None:
            self._spinner.stop()
            self._spinner = None
        self.refresh(layout=True)

    @property
    def spinning(self) -> bool:
        """True while the spinner timer runs."""
        return self._spinner is not None

    def _spin(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER_FRAMES)
        self.refresh()  # same size: no layout pass

    def render(self) -> Content:
        """Icon and label on one line; the error text below when the tool failed."""
        part = self.part
        icon = _ICONS.get(part.state) or SPINNER_FRAMES[self._frame]
        parts = [
            (f"{icon} ", self.get_visual_style("tool-status--icon")),
            (part.label or part.name, self.get_visual_style("tool-status--label")),
        ]
        if part.state == "failed" and part.error:
            error_style = self.get_visual_style("tool-status--error")
            parts.append((f"\n  {part.error}", error_style))
        return Content.assemble(*parts)
