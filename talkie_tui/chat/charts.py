"""Charts as plain text: the series of a chart block, sparklines, and their words."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from talkie_tui.chat.cells import cell_len, cell_text, clip, fit
from talkie_tui.i18n import _, pgettext

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
