"""A compositor that paints only the lines a frame changed.

Textual's compositor answers a partial update (a few changed lines) by asking every widget
whose clip overlaps them for *all* of its lines, then keeps only the changed ones. On the chat
screen that is about 300 lines from ten widgets (the screen, the sidebar, the transcript and its
scroll bar, the turn, the composer, the header and footer) for every frame of a streaming
answer whose tail changed by two lines: most of a frame's cost. This one asks each widget only
for its lines inside the update's rows, and skips widgets outside them.

What goes to the terminal is the same: the lines painted are those Textual would paint (a
widget's `render_lines` with a crop is the same call Textual makes for a partly hidden one), and
each widget's columns stay whole, as Textual's partial updates expect.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual._compositor import Compositor
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["LineCompositor", "RepaintedByLayout"]


class LineCompositor(Compositor):
    """A `Compositor` whose partial updates render only the rows they repaint."""

    def _get_renders(
        self, crop: Region | None = None
    ) -> Iterable[tuple[Region, Region, list[Strip]]]:
        """Each visible widget's lines within `crop`'s rows (whole screen when `crop` is None)."""
        if crop is None:
            yield from super()._get_renders(crop)
            return
        top, bottom = crop.y, crop.bottom
        left, right = crop.x, crop.right
        for widget, (region, clip) in self.visible_widgets.items():
            x, y, width, height = region.intersection(clip)
            start, end = max(y, top), min(y + height, bottom)
            # Whole columns (partial updates expect a widget's lines whole), but only widgets
            # that reach into the update's columns.
            if end <= start or x >= right or x + width <= left:
                continue
            shown = Region(x, start, width, end - start)
            lines = widget.render_lines(Region(x - region.x, start - region.y, width, end - start))
            yield shown, shown, lines


# A plain mixin at run time: a Widget base here would take the place of the widget class's own
# first base in Textual's CSS inheritance (its DEFAULT_CSS and type selectors would be lost).
if TYPE_CHECKING:
    _WidgetBase = Widget
else:
    _WidgetBase = object


class RepaintedByLayout(_WidgetBase):
    """A widget whose new virtual size, found by a layout, is painted by that same layout.

    Textual sets a widget's virtual size as a reactive that asks for layout and repaint, from
    inside the layout that measured it. That layout already repaints what moved, so on the chat
    screen every growth of a streaming answer repainted the whole transcript twice (two frames
    of ~10 ms), then a resized widget's old area and its scroll bar once more. Setting the size
    as a plain value, and forgetting those repaints, keeps the layout's own. (Put it first among
    the bases.)
    """

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        moved = size != self._size or virtual_size != self.virtual_size
        changed: bool = super()._size_updated(size, virtual_size, container_size, layout=False)
        if moved and layout:
            # The layout repaints every widget whose size or virtual size it changed, scroll
            # bars included; Textual would repaint its old area and its scroll bars again.
            self._repaint_regions.clear()
            for bar in (self._vertical_scrollbar, self._horizontal_scrollbar):
                if bar is not None:
                    bar._repaint_regions.clear()
        return changed
