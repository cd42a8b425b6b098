"""Table and key-value UI blocks: aligned columns that fit the width, one line per row.

A cell never wraps: what does not fit its column is cut with "…", so a wide table stays a
table at any width instead of a heap of wrapped fragments. Columns whose every value is a
number are right-aligned. The layout is redone from the block's data at each width, so a
resize redraws it; the height does not depend on the width.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from talkie_tui.i18n import ngettext

__all__ = [
    "ColumnLayout",
    "KvBlockView",
    "TableBlockView",
    "cell_text",
    "clip",
    "fit",
    "is_number",
    "layout_columns",
]

GAP = 2  # spaces between two columns
MIN_COLUMN = 4  # narrower than this a column shows nothing useful ("ab…")
MAX_LABEL_SHARE = 0.4  # a key-value label column takes at most this part of the width

# A number as people write it: -1,234.50, 12 %, $3.20, 1 234 Kč, +0.5 BTC (dates are not).
_NUMBER = re.compile(
    r"^[+\-−]?[$€£¥]?\s?\d{1,3}(?:[,\s\u00a0\u202f']?\d{3})*(?:[.,]\d+)?\s?(?:%|[^\W\d_]{1,4})?$"
)


def cell_text(value: Any) -> str:
    """A JSON value as one line of text (None is empty; newlines and tabs become spaces)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    text = value if isinstance(value, str) else str(value)
    return " ".join(text.split())


def is_number(value: Any) -> bool:
    """True for a JSON number, or text that reads as one (money, a percentage…)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and bool(_NUMBER.match(value.strip()))


def fit(text: str, width: int, *, right: bool = False) -> str:
    """`text` padded or cut (with "…") to exactly `width` cells."""
    if width <= 0:
        return ""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


def clip(text: str, width: int) -> str:
    """`text` cut (with "…") to at most `width` cells, never padded."""
    return fit(text, width) if cell_len(text) > width else text


@dataclass(frozen=True, slots=True)
class ColumnLayout:
    """How wide each shown column is; columns past `shown` did not fit at all."""

    widths: tuple[int, ...]
    hidden: int = 0

    @property
    def shown(self) -> int:
        """How many columns are drawn."""
        return len(self.widths)


def layout_columns(natural: Sequence[int], width: int, *, gap: int = GAP) -> ColumnLayout:
    """Column widths that fit `width`: each its natural width when all fit, else the narrow
    ones keep theirs and the wide ones share what is left equally (never below MIN_COLUMN;
    columns that cannot get even that are left out, from the right)."""
    count = len(natural)
    while count > 1 and count * MIN_COLUMN + (count - 1) * gap > width:
        count -= 1
    wanted = [max(1, n) for n in natural[:count]]
    room = max(1, width - (count - 1) * gap)
    if sum(wanted) <= room:
        return ColumnLayout(tuple(wanted), len(natural) - count)
    widths = [0] * count
    left, open_columns = room, count
    for index in sorted(range(count), key=lambda i: wanted[i]):
        share = left // open_columns
        widths[index] = max(min(wanted[index], share), min(MIN_COLUMN, wanted[index]))
        left -= widths[index]
        open_columns -= 1
    return ColumnLayout(tuple(widths), len(natural) - count)


class _ColumnsView(Widget):
    """What a table and a key-value list share: cells, alignment and the drawing."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"columns--header", "columns--label", "columns--note"}

    def __init__(self, data: dict[str, Any], *, classes: str) -> None:
        super().__init__(classes=classes)
        self.data = data

    # Subclasses say what the rows are.
    def header(self) -> list[str] | None:
        """The column titles, or None."""
        return None

    def rows(self) -> list[list[Any]]:
        """The rows, each a list of cell values (short rows are padded)."""
        raise NotImplementedError

    def label_column(self) -> bool:
        """Whether the first column holds labels (styled as such)."""
        return False

    def max_first(self, width: int) -> int | None:
        """A cap on the first column's width, if any."""
        return None

    def update_data(self, data: dict[str, Any]) -> None:
        """Show the block's new data (the same block sent again)."""
        self.data = data
        self.refresh(layout=True)

    def _table(self) -> tuple[list[str] | None, list[list[Any]], int]:
        header = self.header()
        rows = self.rows()
        columns = max([len(header or [])] + [len(row) for row in rows]) if rows or header else 0
        padded = [row + [None] * (columns - len(row)) for row in rows]
        if header is not None:
            header = header + [""] * (columns - len(header))
        return header, padded, columns

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line per row, plus the title line and its rule, plus a note of hidden columns."""
        header, rows, columns = self._table()
        lines = len(rows) + (2 if header else 0)
        return lines + (1 if self._layout(width)[0].hidden else 0) if columns else 0

    def _layout(self, width: int) -> tuple[ColumnLayout, list[bool]]:
        header, rows, columns = self._table()
        cells = [[cell_text(value) for value in row] for row in rows]
        natural = [
            max([cell_len(header[i]) if header else 0] + [cell_len(row[i]) for row in cells])
            for i in range(columns)
        ]
        cap = self.max_first(width)
        if cap is not None and natural:
            natural[0] = min(natural[0], cap)
        numeric = [
            any(row[i] not in (None, "") for row in rows)
            and all(is_number(row[i]) for row in rows if row[i] not in (None, ""))
            for i in range(columns)
        ]
        return layout_columns(natural, max(1, width)), numeric

    def render(self) -> Content:
        """Every row cut to its columns, as plain text (server text is never markup)."""
        header, rows, columns = self._table()
        if not columns:
            return Content("")
        width = self.content_region.width or self.size.width
        layout, numeric = self._layout(width)
        header_style = self.get_visual_style("columns--header")
        label_style = self.get_visual_style("columns--label")
        note_style = self.get_visual_style("columns--note")
        gap = " " * GAP
        lines: list[Content] = []
        if header is not None:
            titles = gap.join(
                fit(header[i], w, right=numeric[i]) for i, w in enumerate(layout.widths)
            )
            lines.append(Content.styled(titles, header_style))
            rule = gap.join("─" * w for w in layout.widths)
            lines.append(Content.styled(rule, note_style))
        for row in rows:
            parts: list[Content] = []
            for i, w in enumerate(layout.widths):
                text = fit(cell_text(row[i]), w, right=numeric[i])
                styled = i == 0 and self.label_column()
                parts.append(Content.styled(text, label_style) if styled else Content(text))
            lines.append(Content(gap).join(parts))
        if layout.hidden:
            more = ngettext(
                "… {count} more column", "… {count} more columns", layout.hidden
            ).format(count=layout.hidden)
            lines.append(Content.styled(more, note_style))
        return Content("\n").join(lines)


class TableBlockView(_ColumnsView):
    """A `table` block: a header row, a rule, then the rows, in aligned columns."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data, classes="ui-block--table")

    def header(self) -> list[str] | None:
        """The block's `columns`."""
        columns = self.data.get("columns")
        return [cell_text(c) for c in columns] if isinstance(columns, list) else None

    def rows(self) -> list[list[Any]]:
        """The block's `rows` (a row that is not a list is one cell)."""
        rows = self.data.get("rows")
        if not isinstance(rows, list):
            return []
        return [row if isinstance(row, list) else [row] for row in rows]


class KvBlockView(_ColumnsView):
    """A `kv` block: labels in one column, values aligned beside them."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data, classes="ui-block--kv")

    def rows(self) -> list[list[Any]]:
        """One (label, value) row per item."""
        items = self.data.get("items")
        return [
            [item.get("label"), item.get("value")]
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, dict)
        ]

    def label_column(self) -> bool:
        """Labels are the first column."""
        return True

    def max_first(self, width: int) -> int | None:
        """Labels take at most MAX_LABEL_SHARE of the width, so values keep room."""
        return max(MIN_COLUMN, int(width * MAX_LABEL_SHARE))
