"""The Minara parts as plain text: cell widths, aligned columns, sparklines and the words of
todos, questions and attachments, shared by the TUI's widgets, `talkie ask` and the export.

Nothing here imports Textual or Rich (`talkie ask` starts fast, and the conversation model's
layer stays free of the UI): widths are measured from `unicodedata`, the way terminals (and
Rich, for everything but the newest emoji) count them. Server text is already cleaned by the
reducer; these functions only place it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from talkie_tui.i18n import _, ngettext, pgettext

__all__ = [
    "GAP",
    "MAX_COLUMN",
    "MAX_SERIES",
    "MIN_COLUMN",
    "TODO_DONE",
    "TODO_OPEN",
    "ColumnLayout",
    "ColumnLine",
    "Columns",
    "SparkLine",
    "Sparklines",
    "attachment_words",
    "block_lines",
    "cell_len",
    "cell_text",
    "chart_lines",
    "clip",
    "compact_number",
    "fit",
    "human_size",
    "is_number",
    "kv_columns",
    "layout_columns",
    "link_line",
    "more_series",
    "no_data",
    "question_outcome",
    "read_series",
    "resample",
    "set_cell_size",
    "sparklines",
    "table_columns",
    "todo_heading",
    "todo_lines",
    "x_range",
]

# --- cell widths ---------------------------------------------------------------------------

_ZWJ = "\u200d"  # joins the next character into the emoji before it
_VS16 = "\ufe0f"  # asks for the emoji form: a narrow symbol becomes two cells wide
_ZERO_WIDTH = frozenset({"Mn", "Me", "Mc", "Cf", "Zl", "Zp"})


@lru_cache(maxsize=4096)
def _char_width(char: str) -> int:
    """How many cells one character takes on its own: 0, 1 or 2."""
    code = ord(char)
    if code < 32 or 0x7F <= code < 0xA0:
        return 0
    if code < 0x300:
        return 1
    # Hangul vowels and finals, and skin-tone modifiers, join the character before them.
    if 0x1160 <= code <= 0x11FF or 0xD7B0 <= code <= 0xD7FF or 0x1F3FB <= code <= 0x1F3FF:
        return 0
    if unicodedata.category(char) in _ZERO_WIDTH:
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _clusters(text: str) -> Iterator[tuple[str, int]]:
    """`text` as what a terminal draws as one glyph each, with its width in cells."""
    cluster, width, index = "", 0, 0
    while index < len(text):
        char = text[index]
        if cluster and char == _ZWJ:
            cluster += text[index : index + 2]  # the joined character adds no width
            index += 2
            continue
        char_width = _char_width(char)
        if cluster and char_width == 0:
            if char == _VS16 and width == 1 and unicodedata.category(cluster[0]) == "So":
                width = 2
            cluster += char
        else:
            if cluster:
                yield cluster, width
            cluster, width = char, char_width
        index += 1
    if cluster:
        yield cluster, width


def cell_len(text: str) -> int:
    """How many terminal cells `text` takes."""
    if text.isascii() and text.isprintable():
        return len(text)
    return sum(width for _cluster, width in _clusters(text))


def set_cell_size(text: str, width: int) -> str:
    """`text` cut or padded with spaces to exactly `width` cells (a wide character that would
    be cut in half becomes a space)."""
    if width <= 0:
        return ""
    if text.isascii() and text.isprintable():
        return text[:width].ljust(width)
    kept, used = [], 0
    for cluster, size in _clusters(text):
        if used + size > width:
            break
        kept.append(cluster)
        used += size
    return "".join(kept) + " " * (width - used)


# --- cells ---------------------------------------------------------------------------------

# A number as people write it: -1,234.50, 12 %, $3.20, 1 234 Kč, +0.5 BTC (dates are not).
_NUMBER = (
    r"^[+\-−]?[$€£¥]?\s?\d{1,3}(?:[,\s\u00a0\u202f']?\d{3})*(?:[.,]\d+)?\s?"
    r"(?:%|[^\W\d_]{1,4})?$"
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
    # `re` caches the compiled pattern: compiled on first use, not when `talkie ask` starts.
    return isinstance(value, str) and bool(re.match(_NUMBER, value.strip()))


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


# --- aligned columns (table and kv blocks) -------------------------------------------------

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


# --- charts --------------------------------------------------------------------------------

MAX_SERIES = 8  # more series than this are not drawn (a note says how many)
MAX_LABEL = 16  # a series label wider than this is cut
MAX_COLUMN = 6  # a bar or a sparkline step never gets wider than this, however few the points
_SPARKS = "▁▂▃▄▅▆▇█"  # levels of a sparkline


class Series(NamedTuple):
    """One series: its label and its points as (x label, y)."""

    label: str
    points: tuple[tuple[str, float], ...]

    @property
    def low(self) -> float:
        """The smallest y."""
        return min(y for _x, y in self.points)

    @property
    def high(self) -> float:
        """The largest y."""
        return max(y for _x, y in self.points)


def _number(value: Any) -> float | None:
    """A finite y value (a number, or text that parses as one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.replace(",", "").strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def read_series(data: dict[str, Any]) -> list[Series]:
    """The block's series with at least one drawable point (bad points are skipped)."""
    found: list[Series] = []
    raw = data.get("series")
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("points"), list):
            continue
        points = []
        for point in item["points"]:
            if isinstance(point, list | tuple) and len(point) >= 2:
                y = _number(point[1])
                if y is not None:
                    points.append((cell_text(point[0]), y))
        if points:
            found.append(Series(cell_text(item.get("label")), tuple(points)))
    return found


def compact_number(value: float) -> str:
    """A y value for an axis: 68.9k, 1.5M, 42, 0.125 (the UI's decimal separator)."""
    size = abs(value)
    text = ""
    for divisor, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if size >= divisor:
            text = f"{value / divisor:.3g}{suffix}"
            break
    else:
        if value == int(value):
            text = str(int(value))
        elif size >= 1e-3:
            text = f"{value:.3g}"
        else:
            text = f"{value:.1e}"
    return text.replace(".", pgettext("decimal separator", "."))


def resample(values: list[tuple[str, float]], columns: int) -> list[tuple[str, float]]:
    """At most `columns` points: neighbours averaged into one (the first one's x label)."""
    if len(values) <= columns:
        return values
    out = []
    for index in range(columns):
        start = index * len(values) // columns
        end = max(start + 1, (index + 1) * len(values) // columns)
        bucket = values[start:end]
        out.append((bucket[0][0], sum(y for _x, y in bucket) / len(bucket)))
    return out


class SparkLine(NamedTuple):
    """One series' line: its label, its sparkline and its "low–high", each fitted."""

    label: str
    line: str
    range: str

    @property
    def text(self) -> str:
        """The three joined as one line of plain text."""
        return f"{self.label}  {self.line}  {self.range}"


class Sparklines(NamedTuple):
    """Several series drawn in `width` cells: a line each, and the x labels of the longest
    series with the cell each starts at (`offset` is where the sparklines start)."""

    lines: tuple[SparkLine, ...]
    x_labels: tuple[tuple[int, str], ...]
    offset: int


def sparklines(all_series: Sequence[Series], width: int) -> Sparklines:
    """A sparkline per series, each on its own scale, its range at the end, fitting `width`."""
    label_width = min(MAX_LABEL, max(cell_len(s.label) for s in all_series))
    ranges = [f"{compact_number(s.low)}–{compact_number(s.high)}" for s in all_series]
    range_width = max(cell_len(r) for r in ranges)
    room = max(1, width - label_width - range_width - 4)
    longest = max(len(s.points) for s in all_series)
    column = max(1, min(MAX_COLUMN, room // longest))
    spark = min(room, column * longest)  # the range follows the longest sparkline
    lines = []
    for index, series in enumerate(all_series):
        points = resample(list(series.points), spark)
        low, high = series.low, series.high
        levels = [
            round((y - low) / (high - low) * (len(_SPARKS) - 1)) if high > low else 3
            for _x, y in points
        ]
        step = column if len(points) * column <= spark else 1
        line = "".join(_SPARKS[level] * step for level in levels)
        lines.append(
            SparkLine(
                fit(series.label, label_width),
                fit(line, spark),
                fit(ranges[index], range_width, right=True),
            )
        )
    first = max(all_series, key=lambda s: len(s.points))
    points = resample(list(first.points), spark)
    step = column if len(points) * column <= spark else 1
    offset = label_width + 2
    labels = tuple((offset + i * step, x) for i, (x, _y) in enumerate(points) if x)
    return Sparklines(tuple(lines), labels, offset)


def x_range(all_series: Sequence[Series]) -> str:
    """The first and last x label of the longest series ("Mon – Sat"), "" when it has none."""
    points = max(all_series, key=lambda s: len(s.points)).points
    first, last = points[0][0], points[-1][0]
    if not first or not last or len(points) == 1:
        return first or last
    return f"{first} – {last}"


def no_data() -> str:
    """What a chart without a drawable point shows."""
    return _("No data to draw.")


def more_series(count: int) -> str:
    """The note under a chart with more series than MAX_SERIES."""
    return _("… {count} more series").format(count=count)


def chart_lines(data: dict[str, Any], width: int) -> list[str]:
    """A chart as plain text: its title, a sparkline line per series, and the x range."""
    title = cell_text(data.get("title"))
    lines = [clip(title, width)] if title else []
    series = read_series(data)
    if not series:
        return [*lines, no_data()]
    drawn = sparklines(series[:MAX_SERIES], width)
    lines += [line.text.rstrip() for line in drawn.lines]
    span = x_range(series[:MAX_SERIES])
    if span:
        lines.append(" " * drawn.offset + clip(span, max(1, width - drawn.offset)))
    if len(series) > MAX_SERIES:
        lines.append(more_series(len(series) - MAX_SERIES))
    return lines


# --- blocks, links, todos, questions, attachments ------------------------------------------


def link_line(label: str | None, url: str) -> str:
    """A link as "label: url" (the URL alone stays readable and can be copied)."""
    return f"{label or _('Link')}: {url}"


def _field(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def block_lines(kind: str, data: dict[str, Any], width: int) -> list[str]:
    """A UI block as lines of plain text at most `width` cells wide (Markdown as written)."""
    if kind == "markdown":
        return _field(data, "text").splitlines()
    if kind in ("table", "kv"):
        columns = table_columns(data) if kind == "table" else kv_columns(data)
        return [line.text.rstrip() for line in columns.lines(width)]
    if kind == "link":
        return [link_line(_field(data, "label"), _field(data, "url"))]
    if kind == "chart":
        return chart_lines(data, width)
    fallback = _field(data, "fallback_text")
    return fallback.splitlines() if fallback else []


TODO_DONE, TODO_OPEN = "☑", "☐"  # the boxes of a checklist, as the TUI draws them


def todo_heading(items: Sequence[tuple[str, bool]]) -> str:
    """ "To do · 1 of 3 done"."""
    done = sum(1 for _text, is_done in items if is_done)
    return _("To do · {done} of {total} done").format(done=done, total=len(items))


def todo_lines(items: Sequence[tuple[str, bool]]) -> list[str]:
    """A todo list as a checklist: its heading, then ☐ / ☑ and each item's text."""
    return [todo_heading(items)] + [
        f"{TODO_DONE if done else TODO_OPEN} {text}" for text, done in items
    ]


_OUTCOMES: dict[str, Callable[[], str]] = {
    "answered": lambda: pgettext("question", "Answered"),
    "elsewhere": lambda: pgettext("question", "Answered elsewhere"),
    "timeout": lambda: pgettext("question", "Timed out"),
    "cancelled": lambda: pgettext("question", "Cancelled"),
}


def question_outcome(outcome: str | None, answered_with: str | None = None) -> str:
    """How a question ended, in words ("Open" while it waits), with the answer given here."""
    if outcome is None:
        return pgettext("question", "Open")
    words = _OUTCOMES.get(outcome)
    said = words() if words is not None else pgettext("question", "Closed")
    if outcome == "answered" and answered_with:
        return f"{said} “{answered_with}”"
    return said


def human_size(size: int) -> str:
    """A byte count for people: `512 B`, `48.2 kB`, `3.1 MB` (powers of 1000, the UI
    language's decimal point)."""
    if size < 1000:
        return f"{size} B"
    value, unit = float(size), "B"
    for unit in ("kB", "MB", "GB", "TB"):  # noqa: B007 (the last unit is the one used)
        value /= 1000
        if value < 1000:
            break
    if value >= 100:
        return f"{value:.0f} {unit}"
    return f"{value:.1f} {unit}".replace(".", pgettext("decimal separator", "."))


_KINDS: dict[str, Callable[[], str]] = {
    "image": lambda: pgettext("attachment kind", "image"),
    "pdf": lambda: pgettext("attachment kind", "PDF"),
    "spreadsheet": lambda: pgettext("attachment kind", "spreadsheet"),
    "text": lambda: pgettext("attachment kind", "text"),
    "office": lambda: pgettext("attachment kind", "document"),
}


def attachment_words(kind: str, size: int) -> tuple[str, str]:
    """An attachment's kind in words ("image"; another kind as sent) and its size."""
    name = _KINDS.get(kind)
    return (name() if name is not None else kind), human_size(max(0, size))
