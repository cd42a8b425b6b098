"""Aligned columns of plain text, for the table and key-value blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from talkie_tui.chat.cells import cell_len, cell_text, fit, is_number
from talkie_tui.i18n import ngettext

GAP = 2  # spaces between two columns
MIN_COLUMN = 4  # narrower than this a column shows nothing useful ("ab…")
MAX_LABEL_SHARE = 0.4  # a key-value label column takes at most this part of the width


class ColumnLayout(NamedTuple):
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


LineRole = Literal["header", "rule", "row", "note"]


class ColumnLine(NamedTuple):
    """One drawn line of a table: its cells, each already fitted to its column."""

    role: LineRole
    cells: tuple[str, ...]

    @property
    def text(self) -> str:
        """The cells joined by the gap."""
        return (" " * GAP).join(self.cells)


class Columns(NamedTuple):
    """A table or key-value block ready to lay out: the titles (or None), the rows' values
    padded to one length, and whether the first column holds labels (kept to a share of the
    width so the values keep room)."""

    header: tuple[str, ...] | None
    rows: tuple[tuple[Any, ...], ...]
    labelled: bool = False

    @classmethod
    def of(
        cls, header: Sequence[str] | None, rows: Sequence[Sequence[Any]], *, labelled: bool = False
    ) -> Columns:
        """Columns from ragged rows (short rows and the header are padded)."""
        count = max([len(header or ())] + [len(row) for row in rows]) if rows or header else 0
        padded = tuple(tuple(row) + (None,) * (count - len(row)) for row in rows)
        titled = None if header is None else tuple(header) + ("",) * (count - len(header))
        return cls(titled, padded, labelled)

    @property
    def column_count(self) -> int:
        """How many columns there are."""
        return (
            len(self.header) if self.header is not None else len(self.rows[0]) if self.rows else 0
        )

    def cells(self) -> list[list[str]]:
        """Every row's values as one line of text each."""
        return [[cell_text(value) for value in row] for row in self.rows]

    def numeric(self) -> list[bool]:
        """Per column: True when every value it has reads as a number (it is right-aligned)."""
        return [
            any(row[i] not in (None, "") for row in self.rows)
            and all(is_number(row[i]) for row in self.rows if row[i] not in (None, ""))
            for i in range(self.column_count)
        ]

    def layout(self, width: int) -> ColumnLayout:
        """The columns' widths at `width`."""
        header, cells = self.header, self.cells()
        natural = [
            max([cell_len(header[i]) if header else 0] + [cell_len(row[i]) for row in cells])
            for i in range(self.column_count)
        ]
        if self.labelled and natural:
            natural[0] = min(natural[0], max(MIN_COLUMN, int(width * MAX_LABEL_SHARE)))
        return layout_columns(natural, max(1, width))

    def lines(self, width: int) -> list[ColumnLine]:
        """The header, its rule, one line per row, and a note of columns that did not fit."""
        if not self.column_count:
            return []
        layout, numeric = self.layout(width), self.numeric()
        lines: list[ColumnLine] = []
        if self.header is not None:
            titles = (fit(self.header[i], w, right=numeric[i]) for i, w in enumerate(layout.widths))
            lines.append(ColumnLine("header", tuple(titles)))
            lines.append(ColumnLine("rule", tuple("─" * w for w in layout.widths)))
        for row in self.cells():
            cells = (fit(row[i], w, right=numeric[i]) for i, w in enumerate(layout.widths))
            lines.append(ColumnLine("row", tuple(cells)))
        if layout.hidden:
            more = ngettext("… {count} more column", "… {count} more columns", layout.hidden)
            lines.append(ColumnLine("note", (more.format(count=layout.hidden),)))
        return lines


def table_columns(data: dict[str, Any]) -> Columns:
    """A `table` block's `columns` and `rows` (a row that is not a list is one cell)."""
    columns, rows = data.get("columns"), data.get("rows")
    header = [cell_text(c) for c in columns] if isinstance(columns, list) else None
    rows = (
        [row if isinstance(row, list) else [row] for row in rows] if isinstance(rows, list) else []
    )
    return Columns.of(header, rows)


def kv_columns(data: dict[str, Any]) -> Columns:
    """A `kv` block's items as (label, value) rows."""
    items = data.get("items")
    rows = [
        [item.get("label"), item.get("value")]
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict)
    ]
    return Columns.of(None, rows, labelled=True)
