"""Table and key-value UI blocks: aligned columns that fit the width, one line per row.

A cell never wraps: what does not fit its column is cut with "…", so a wide table stays a
table at any width instead of a heap of wrapped fragments. Columns whose every value is a
number are right-aligned. The layout is redone from the block's data at each width, so a
resize redraws it; the height does not depend on the width. The layout itself is
`talkie_tui.chat.block_text`'s, which `talkie ask` and the export print from too.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from talkie_tui.chat.block_text import GAP, Columns, kv_columns, table_columns

__all__ = ["KvBlockView", "TableBlockView"]


class _ColumnsView(Widget):
    """What a table and a key-value list share: the block's columns, styled and drawn."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"columns--header", "columns--label", "columns--note"}

    def __init__(self, data: dict[str, Any], *, classes: str) -> None:
        super().__init__(classes=classes)
        self.data = data

    def columns(self) -> Columns:
        """The block's data as columns (subclasses say how)."""
        raise NotImplementedError

    def update_data(self, data: dict[str, Any]) -> None:
        """Show the block's new data (the same block sent again)."""
        self.data = data
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line per row, plus the title line and its rule, plus a note of hidden columns."""
        return len(self.columns().lines(width))

    def render(self) -> Content:
        """Every row cut to its columns, as plain text (server text is never markup)."""
        columns = self.columns()
        width = self.content_region.width or self.size.width
        styles = {
            "header": self.get_visual_style("columns--header"),
            "rule": self.get_visual_style("columns--note"),
            "note": self.get_visual_style("columns--note"),
        }
        label_style = self.get_visual_style("columns--label")
        lines: list[Content] = []
        for line in columns.lines(width):
            if line.role != "row":
                lines.append(Content.styled(line.text, styles[line.role]))
                continue
            parts = [
                Content.styled(text, label_style) if i == 0 and columns.labelled else Content(text)
                for i, text in enumerate(line.cells)
            ]
            lines.append(Content(" " * GAP).join(parts))
        return Content("\n").join(lines)


class TableBlockView(_ColumnsView):
    """A `table` block: a header row, a rule, then the rows, in aligned columns."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data, classes="ui-block--table")

    def columns(self) -> Columns:
        """The block's `columns` and `rows`."""
        return table_columns(self.data)


class KvBlockView(_ColumnsView):
    """A `kv` block: labels in one column, values aligned beside them."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data, classes="ui-block--kv")

    def columns(self) -> Columns:
        """One (label, value) row per item; labels take at most a share of the width."""
        return kv_columns(self.data)
