"""Chart UI blocks drawn in the terminal: one series as columns of Unicode bars, several as a
sparkline each (each on its own scale, with its range), the title, the y range and the x labels
taken from the points. The drawing is redone from the data at each width, so it always fits
and a resize redraws it; the height does not depend on the width.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.content import Content
from textual.geometry import Size
from textual.style import Style
from textual.widget import Widget

from talkie_tui.chat.block_text import (
    MAX_COLUMN,
    MAX_SERIES,
    Series,
    cell_len,
    cell_text,
    clip,
    compact_number,
    fit,
    more_series,
    no_data,
    read_series,
    resample,
    sparklines,
)

__all__ = ["ChartView"]

PLOT_ROWS = 8  # the height of a one-series chart's bars
SERIES_STYLES = 4  # chart--series-0 … -3 in the stylesheet, reused in turn
_BARS = " ▁▂▃▄▅▆▇█"  # eighths of a cell, for the bars


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
            lines.append(Content.styled(no_data(), self._style("chart--label")))
        elif len(series) == 1:
            lines += self._bars(series[0], width)
        else:
            lines += self._sparklines(series[:MAX_SERIES], width)
            if len(series) > MAX_SERIES:
                more = more_series(len(series) - MAX_SERIES)
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
        points = resample(list(series.points), plot)
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
        drawn = sparklines(all_series, width)
        label_style = self._style("chart--label")
        lines = [
            Content.assemble(
                (spark.label + "  ", label_style),
                (spark.line, self._style(f"chart--series-{index % SERIES_STYLES}")),
                ("  " + spark.range, label_style),
            )
            for index, spark in enumerate(drawn.lines)
        ]
        lines.append(Content.styled(_x_labels(list(drawn.x_labels), width).rstrip(), label_style))
        return lines
