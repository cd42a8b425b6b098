"""Chart UI blocks drawn in the terminal: one series as columns of Unicode bars, several as a
sparkline each (each on its own scale, with its range), the title, the y range and the x labels
taken from the points. The drawing is redone from the data at each width, so it always fits
and a resize redraws it; the height does not depend on the width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len
from textual.content import Content
from textual.geometry import Size
from textual.style import Style
from textual.widget import Widget

from talkie_tui.i18n import _, pgettext

from .columns import cell_text, clip, fit

__all__ = ["ChartView", "Series", "compact_number", "read_series"]

PLOT_ROWS = 8  # the height of a one-series chart's bars
MAX_SERIES = 8  # more series than this are not drawn (a note says how many)
MAX_LABEL = 16  # a series label wider than this is cut
MAX_COLUMN = 6  # a bar never gets wider than this, however few the points
SERIES_STYLES = 4  # chart--series-0 … -3 in the stylesheet, reused in turn
_BARS = " ▁▂▃▄▅▆▇█"  # eighths of a cell, for the bars
_SPARKS = "▁▂▃▄▅▆▇█"  # levels of a sparkline


@dataclass(frozen=True, slots=True)
class Series:
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


def _resample(values: list[tuple[str, float]], columns: int) -> list[tuple[str, float]]:
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


def _x_labels(labels: list[tuple[int, str]], width: int) -> str:
    """The x labels at their columns, left to right, skipping any that would overlap."""
    cells = [" "] * width  # one entry per terminal cell ("" behind a wide character)
    free = 0  # the first cell a label may start at
    for column, text in labels:
        start = max(column, free)
        if start >= width or start - column > 1:
            continue  # no room, or it would sit too far from its point
        position = start
        for char in fit(text, min(cell_len(text), width - start)):
            cells[position] = char
            cells[position + 1 : position + cell_len(char)] = [""] * (cell_len(char) - 1)
            position += cell_len(char)
        free = position + 1
    return "".join(cells)


class ChartView(Widget):
    """A `chart` block, drawn to the width it has."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "chart--title",
        "chart--axis",
        "chart--label",
        *(f"chart--series-{index}" for index in range(SERIES_STYLES)),
    }

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(classes="ui-block--chart")
        self.data = data

    def update_data(self, data: dict[str, Any]) -> None:
        """Show the block's new data (the same block sent again)."""
        self.data = data
        self.refresh(layout=True)

    @property
    def title(self) -> str:
        """The chart's title ("" when it has none)."""
        return cell_text(self.data.get("title"))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The same number of lines at every width."""
        return len(self._lines(max(1, width)))

    def render(self) -> Content:
        """The chart at the current width."""
        width = self.content_region.width or self.size.width
        return Content("\n").join(self._lines(max(1, width)))

    # --- drawing ---------------------------------------------------------------------------

    def _lines(self, width: int) -> list[Content]:
        series = read_series(self.data)
        lines: list[Content] = []
        if self.title:
            lines.append(Content.styled(clip(self.title, width), self._style("chart--title")))
        if not series:
            lines.append(Content.styled(_("No data to draw."), self._style("chart--label")))
        elif len(series) == 1:
            lines += self._bars(series[0], width)
        else:
            lines += self._sparklines(series[:MAX_SERIES], width)
            if len(series) > MAX_SERIES:
                more = _("… {count} more series").format(count=len(series) - MAX_SERIES)
                lines.append(Content.styled(more, self._style("chart--label")))
        return lines

    def _style(self, component: str) -> Style:
        return self.get_visual_style(component) if self.is_mounted else Style()

    def _bars(self, series: Series, width: int) -> list[Content]:
        """One series: bars over a y axis marked with its range, the x labels below."""
        low, high = series.low, series.high
        # Bars stand on zero when the values are all positive and zero is near enough to
        # keep their differences visible; else the axis spans just the values.
        base = 0.0 if 0 <= low <= high / 2 else low
        top = high if high > base else base + 1
        top_label, base_label = compact_number(top), compact_number(base)
        axis_width = max(cell_len(top_label), cell_len(base_label))
        plot = max(1, width - axis_width - 1)
        points = _resample(list(series.points), plot)
        column = max(1, min(MAX_COLUMN, plot // len(points)))
        bar = column - 1 if column > 1 else 1
        eighths = [
            max(1, round((y - base) / (top - base) * PLOT_ROWS * 8)) if y > base else 1
            for _x, y in points
        ]
        axis, color = self._style("chart--axis"), self._style("chart--series-0")
        lines = []
        for row in range(PLOT_ROWS):
            level = PLOT_ROWS - 1 - row
            label = top_label if row == 0 else base_label if row == PLOT_ROWS - 1 else ""
            tick = "┤" if row in (0, PLOT_ROWS - 1) else "│"
            cells = "".join(
                _BARS[min(8, max(0, h - level * 8))] * bar + " " * (column - bar) for h in eighths
            )
            lines.append(
                Content.assemble(
                    (fit(label, axis_width, right=True) + tick, axis), (cells.rstrip(), color)
                )
            )
        used = column * len(points)
        lines.append(Content.styled(" " * axis_width + "└" + "─" * used, axis))
        labels = [(axis_width + 1 + i * column, x) for i, (x, _y) in enumerate(points) if x]
        lines.append(Content.styled(_x_labels(labels, width).rstrip(), self._style("chart--label")))
        if series.label:
            lines.append(Content.assemble(("■ ", color), (clip(series.label, width - 2), Style())))
        return lines

    def _sparklines(self, all_series: list[Series], width: int) -> list[Content]:
        """Several series: a sparkline each on its own scale, its range at the end."""
        label_width = min(MAX_LABEL, max(cell_len(s.label) for s in all_series))
        ranges = [f"{compact_number(s.low)}–{compact_number(s.high)}" for s in all_series]
        range_width = max(cell_len(r) for r in ranges)
        room = max(1, width - label_width - range_width - 4)
        longest = max(len(s.points) for s in all_series)
        column = max(1, min(MAX_COLUMN, room // longest))
        spark = min(room, column * longest)  # the range follows the longest sparkline
        label_style = self._style("chart--label")
        lines = []
        for index, series in enumerate(all_series):
            points = _resample(list(series.points), spark)
            low, high = series.low, series.high
            levels = [
                round((y - low) / (high - low) * (len(_SPARKS) - 1)) if high > low else 3
                for _x, y in points
            ]
            step = column if len(points) * column <= spark else 1
            line = "".join(_SPARKS[level] * step for level in levels)
            color = self._style(f"chart--series-{index % SERIES_STYLES}")
            lines.append(
                Content.assemble(
                    (fit(series.label, label_width) + "  ", label_style),
                    (fit(line, spark), color),
                    ("  " + fit(ranges[index], range_width, right=True), label_style),
                )
            )
        first = max(all_series, key=lambda s: len(s.points))
        points = _resample(list(first.points), spark)
        step = column if len(points) * column <= spark else 1
        offset = label_width + 2
        labels = [(offset + i * step, x) for i, (x, _y) in enumerate(points) if x]
        lines.append(Content.styled(_x_labels(labels, width).rstrip(), label_style))
        return lines
