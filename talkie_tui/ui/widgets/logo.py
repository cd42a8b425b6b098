"""The server's logo, drawn in half blocks to fit the widget (nothing when there is none)."""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual import work
from textual.events import Resize
from textual.widget import Widget

from talkie_tui.ui.support.logo_drawing import render_half_blocks

__all__ = ["LogoView"]

_Key = tuple[int, int, tuple[int, int, int]]


class LogoView(Widget):
    """Draws logo bytes (from `fetch_logo`) scaled to its content size; blank for None.

    Decoding a large PNG can take a few hundred milliseconds, so it runs in a thread and the
    widget shows the previous drawing (or nothing) until it is done.
    """

    def __init__(self, data: bytes | None, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="logo")
        self.data = data
        self._drawn_for: _Key | None = None
        self._drawing: Text | None = None

    def set_data(self, data: bytes | None) -> None:
        """Show other logo bytes (e.g. once a fetch finished)."""
        self.data = data
        self._drawn_for = None
        self._drawing = None
        self._redraw()

    def on_resize(self, event: Resize) -> None:
        """Draw again for the new size."""
        self._redraw()

    def _redraw(self) -> None:
        if self.data is None:
            self.refresh()
            return
        width, height = self.content_size
        key = (width, height, self.background_colors[1].rgb)
        if key != self._drawn_for:
            self._draw(self.data, key)

    # A worker made by the decorator: a drawing replaced before it started (exclusive) leaves
    # no coroutine behind that was never awaited.
    @work(group="logo", exclusive=True)
    async def _draw(self, data: bytes, key: _Key) -> None:
        width, height, background = key
        drawing = await asyncio.to_thread(render_half_blocks, data, width, height, background)
        self._drawn_for, self._drawing = key, drawing
        self.refresh()

    def render(self) -> Text:
        """The latest drawing, or an empty text."""
        return self._drawing if self.data is not None and self._drawing else Text()
