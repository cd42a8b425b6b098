"""A UI block of the agent (Minara `ui_block`): markdown, a table, key-value pairs, a link or a
chart, and for any other kind its `fallback_text`, shown plainly.

The block's strings were cleaned by the reducer; here they are only ever placed as plain text
(or through `MarkdownView`, which draws the Markdown subset and never Rich markup). The same
block sent again replaces its data in place, and `refresh_part` redraws it.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from talkie_tui.chat.turns import UiBlockPart
from talkie_tui.ui.widgets.chart import ChartView
from talkie_tui.ui.widgets.columns import KvBlockView, TableBlockView
from talkie_tui.ui.widgets.link import LinkRow
from talkie_tui.ui.widgets.markdown_view import MarkdownView

__all__ = ["KINDS", "UiBlockView", "block_widget"]

KINDS = frozenset({"markdown", "table", "kv", "link", "chart"})
"""The kinds drawn as such; any other shows its fallback text."""


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def block_widget(kind: str, data: dict[str, Any]) -> Widget:
    """The widget that draws one block of `kind`."""
    if kind == "markdown":
        return MarkdownView(_text(data, "text"), classes="ui-block--markdown")
    if kind == "table":
        return TableBlockView(data)
    if kind == "kv":
        return KvBlockView(data)
    if kind == "link":
        # Opened only on Enter or a click, through the screen's link rules (https or
        # same-origin), exactly like a `talkie.open` link.
        return LinkRow(_text(data, "label"), _text(data, "url"), classes="ui-block--link")
    if kind == "chart":
        return ChartView(data)
    return Static(Content(_text(data, "fallback_text")), markup=False, classes="ui-block--fallback")


class UiBlockView(Vertical):
    """One `UiBlockPart`, redrawn in place when the agent sends the block again."""

    def __init__(self, part: UiBlockPart) -> None:
        kind = part.kind if part.kind in KINDS else "other"
        super().__init__(classes=f"ui-block -{kind}")
        self.part = part
        self._shown: tuple[str, dict[str, Any]] = (part.kind, part.data)

    def compose(self) -> ComposeResult:
        """The block's own widget."""
        yield block_widget(self.part.kind, self.part.data)

    def refresh_part(self) -> None:
        """Redraw after the part changed (nothing to do when it did not)."""
        part = self.part
        if self._shown[0] == part.kind and self._shown[1] is part.data:
            return  # the reducer replaces `data` whole when the block comes again
        same_kind = self._shown[0] == part.kind
        self._shown = (part.kind, part.data)
        child = self.children[0] if self.children else None
        if same_kind and isinstance(child, TableBlockView | KvBlockView | ChartView):
            child.update_data(part.data)
            return
        self.remove_children()
        self.mount(block_widget(part.kind, part.data))
