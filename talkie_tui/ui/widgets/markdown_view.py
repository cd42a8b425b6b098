"""MarkdownView: assistant text that streams without slowing down as the answer grows.

Why not Textual's `Markdown`: it mounts a widget per block and every frame lays out every block
again, so a long answer falls further and further behind (notes/textual.md §2.2b). Here a whole
message is one line-API widget. Finished top-level blocks are *frozen*: parsed and wrapped once
(again only when the width changes) and painted from cached `Strip`s. Only the open tail (the
last block, which may still grow) is re-parsed and re-wrapped, at most once per frame. Their
lines are `BlockLines`; the styles come from the screen's one `MarkdownPalette`.
"""

from __future__ import annotations

from time import monotonic
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from talkie_tui.ui.messages import OpenLinkRequested
from talkie_tui.ui.support.compositor import RepaintedByLayout
from talkie_tui.ui.support.markdown import (
    DEFAULT_STYLES,
    LINK_LABEL_KEY,
    LINK_URL_KEY,
    Link,
    StyleSource,
    parse_blocks,
    render_segments,
)
from talkie_tui.ui.widgets.markdown_lines import BlockLines, line_start
from talkie_tui.ui.widgets.markdown_palette import MarkdownPalette, component_class, palette_for

__all__ = ["FRAME_INTERVAL", "MarkdownView"]

FRAME_INTERVAL = 1 / 24
"""Seconds between two re-renders of the live tail while text streams in.

Each costs a parse of the tail (~1 ms) and a frame of Textual's (~2 ms of CPU in a terminal:
its compositor asks every widget on the screen for its visible lines, whatever changed). 24 a
second reads as smoothly as 30, with a fifth fewer of both: measured in the client at 500
tokens/s, ~2 % of its CPU (most of the rest is per token: reading and decoding the stream).
"""

GROW_INTERVAL = 1 / 10
"""Seconds between two height changes while streaming.

A height change re-lays out the whole transcript and scrolls it (a full repaint): with 200
messages that frame costs ~10x an in-place repaint. So new lines are revealed at most 10 times
a second, while text within the visible lines still updates at the frame rate.
"""

RESERVE_PERIOD = 0.5
"""Seconds of new lines kept as blank room below fast streaming text.

Every height change lays out and repaints the whole transcript (in a terminal that frame costs
~10x an in-place repaint, mostly Textual's compositor). When lines arrive faster than a few a
second, the view grows by the lines expected in this period at once, and the next lines are
painted in place in that room: at 500 tokens/s the transcript moves twice a second instead of
10, and new lines show at the frame rate instead of at the next growth. Slow streams get no
room (0 lines), so an answer at reading speed looks as before.
"""

RESERVE_RELEASE = 0.5
"""Seconds without new text after which the blank room goes (text paused: a tool runs)."""

# Most blank room, as a part of the screen's height: the text stays in the lower half.
_RESERVE_SCREEN_SHARE = 0.6
# A rate is measured over at least this many seconds of growth.
_RATE_WINDOW = 0.2
# Textual's one-shot timer cannot wait for (almost) nothing; such flushes run next instead.
_MIN_TIMER = 0.002
# Painted frozen lines kept as Strips: a few screens' worth. A Strip costs ~10 objects, and
# caching every line of a long history made full garbage collections (UI pauses) longer.
_STRIP_CACHE_LINES = 256


class MarkdownView(RepaintedByLayout, Widget):
    """Markdown (§7 subset) that can stream: `append()` deltas, then `finish()`."""

    # Mouse selection would need offset metadata on every Strip; copying goes through the
    # app's copy command instead (a drag would otherwise copy Textual's fallback text).
    ALLOW_SELECT = False

    def __init__(self, text: str = "", *, streaming: bool = False, **widget_kwargs: Any) -> None:
        # State first: Widget.__init__ may already ask for a style update.
        self._streaming = streaming
        self._frozen_chunks: list[str] = []
        self._tail_chunks: list[str] = [text] if text else []
        self._pending = bool(text)
        self._references: dict[str, Any] = {}
        self._frozen = BlockLines()
        self._live = BlockLines()
        self._width = 0
        self._flush_scheduled = False
        self._last_flush = 0.0
        self._height = 0
        self._grow_scheduled = False
        self._last_grow = 0.0
        # Lines a second while streaming (measured at growths), and where that measure began.
        self._line_rate = 0.0
        self._rate_mark: tuple[float, int] | None = None
        self._last_append = 0.0
        self._release_scheduled = False
        self._palette: MarkdownPalette | None = None
        self._styles = StyleSource(self._component_style)
        self._base_style = Style.null()
        self._frozen_strips: LRUCache[int, Strip] = LRUCache(_STRIP_CACHE_LINES)
        self._live_strips: dict[int, Strip] = {}
        # While streaming: lines as painted for the compositor (styles and filters applied), by
        # line number, what they were painted with, and the one blank line of the room below.
        self._painted: LRUCache[int, Strip] = LRUCache(_STRIP_CACHE_LINES)
        self._painted_with: tuple[object, ...] | None = None
        self._painted_blank: Strip | None = None
        super().__init__(**widget_kwargs)
        if not streaming:
            self._parse(final=True)

    @property
    def text(self) -> str:
        """Everything appended so far."""
        if len(self._frozen_chunks) > 1:
            self._frozen_chunks = ["".join(self._frozen_chunks)]
        return "".join(self._frozen_chunks) + self._tail()

    @property
    def links(self) -> list[Link]:
        """Every link as (label, url), in order, including text not painted yet."""
        if self._pending:
            self._update(final=not self._streaming)
        return [
            link for part in (self._frozen, self._live) for b in part.blocks for link in b.links
        ]

    @property
    def streaming(self) -> bool:
        """True until `finish()`."""
        return self._streaming

    @property
    def frozen_block_count(self) -> int:
        """How many top-level blocks are final and cached."""
        return len(self._frozen.blocks)

    @property
    def frozen_line_count(self) -> int:
        """How many wrapped lines the frozen blocks have."""
        return len(self._frozen.lines)

    @property
    def live_line_count(self) -> int:
        """How many wrapped lines the open tail has."""
        return len(self._live.lines)

    @property
    def live_block_count(self) -> int:
        """How many top-level blocks are re-rendered on each flush (the open tail)."""
        return len(self._live.blocks)

    def append(self, delta: str) -> None:
        """Add streamed text; the tail is re-rendered at most once per frame."""
        if not self._streaming:
            raise RuntimeError("MarkdownView.append() after finish()")
        if not delta:
            return
        self._tail_chunks.append(delta)
        self._pending = True
        self._last_append = monotonic()
        if not self._flush_scheduled and self.is_mounted:
            self._flush_scheduled = True
            delay = self._last_flush + FRAME_INTERVAL - monotonic()
            if delay > _MIN_TIMER:
                self.set_timer(delay, self._flush, name="markdown-flush")
            else:
                self.call_later(self._flush)

    def finish(self) -> None:
        """The stream ended: freeze the tail so the message is one cached widget."""
        if self._streaming:
            self._streaming = False
            self._update(final=True)

    def _tail(self) -> str:
        """The text after the frozen blocks, joined once per flush rather than once per delta."""
        if len(self._tail_chunks) > 1:
            self._tail_chunks = ["".join(self._tail_chunks)]
        return self._tail_chunks[0] if self._tail_chunks else ""

    def on_mount(self) -> None:
        """Find (or mount) the screen's palette; render text given before mounting."""
        self._palette = palette_for(self.screen)
        if self._pending:
            self._update(final=not self._streaming)

    def _flush(self) -> None:
        self._flush_scheduled = False
        if self._streaming and self._pending:
            self._last_flush = monotonic()
            self._update(final=False)

    def _update(self, *, final: bool) -> None:
        """Parse the tail, freeze what is final, and repaint only the lines that changed."""
        old_frozen = len(self._frozen.lines)
        old_tail = self._live.lines
        self._parse(final=final)
        if not self.is_mounted:
            self._live_strips.clear()
            self._height = self._line_count()
            return
        if self._width <= 0:
            self._live_strips.clear()
            self.refresh(layout=True)
            return
        # A growing tail mostly changes its last line or two: the lines before the first one
        # that differs keep their Strips and are not painted again.
        first = self._first_changed(old_frozen, old_tail)
        frozen = len(self._frozen.lines)
        self._live_strips = {y: s for y, s in self._live_strips.items() if frozen <= y < first}
        self._forget_painted(first)
        old_height = self._height
        self._grow()
        end = min(max(old_frozen + len(old_tail), self._line_count()), self._height)
        layout = self._height != old_height
        if layout or end > first:
            self.refresh(Region(0, first, self._width, max(0, end - first)), layout=layout)

    def _first_changed(self, start: int, old_tail: list[Text]) -> int:
        """The first line from `start` on that differs from `old_tail` (the lines from `start`
        before the parse)."""
        frozen, live = self._frozen.lines, self._live.lines
        count = len(frozen) + len(live)
        for y, old in enumerate(old_tail, start):
            if y >= count:
                return y
            new = frozen[y] if y < len(frozen) else live[y - len(frozen)]
            if new.plain != old.plain or new.spans != old.spans or new.style != old.style:
                return y
        return start + len(old_tail)

    def _grow(self) -> None:
        """Show every line now, or schedule it if the height changed too recently.

        While streaming the height only grows, by the lines that arrived plus blank room for
        those expected soon (`reserve`); lines that fit in the room need no new layout.
        """
        lines = self._line_count()
        if not self._streaming:
            self._height = lines
            return
        if lines <= self._height:
            return
        now = monotonic()
        wait = self._last_grow + GROW_INTERVAL - now
        if wait <= _MIN_TIMER:
            self._height = lines + self._reserve(now, lines)
            self._last_grow = now
            self._schedule_release()
        elif not self._grow_scheduled:
            self._grow_scheduled = True
            self.set_timer(wait, self._scheduled_grow, name="markdown-grow")

    def _reserve(self, now: float, lines: int) -> int:
        """Blank lines to keep below the text: the lines expected in RESERVE_PERIOD."""
        mark = self._rate_mark
        if mark is None or lines < mark[1]:
            self._rate_mark = (now, lines)
        elif now - mark[0] >= _RATE_WINDOW:
            rate = (lines - mark[1]) / (now - mark[0])
            self._line_rate = rate if not self._line_rate else (self._line_rate + rate) / 2
            self._rate_mark = (now, lines)
        room = int(self._line_rate * RESERVE_PERIOD)
        if room < 2:
            return 0  # a slow stream: every new line shows as it comes, as ever
        return min(room, max(2, int(self.screen.size.height * _RESERVE_SCREEN_SHARE)))

    def _schedule_release(self) -> None:
        if not self._release_scheduled and self._height > self._line_count():
            self._release_scheduled = True
            self.set_timer(RESERVE_RELEASE, self._release, name="markdown-release")

    def _release(self) -> None:
        """Text stopped coming for a while: drop the blank room (it comes back if it flows)."""
        self._release_scheduled = False
        idle = monotonic() - self._last_append
        if not self._streaming:
            return
        if idle < RESERVE_RELEASE:
            self._release_scheduled = True
            self.set_timer(RESERVE_RELEASE - idle, self._release, name="markdown-release")
            return
        lines = self._line_count()
        if self._height > lines:
            self._height = lines
            self._forget_painted(lines)
            self._line_rate = 0.0
            self._rate_mark = None
            self.refresh(layout=True)

    def _scheduled_grow(self) -> None:
        self._grow_scheduled = False
        old_height = self._height
        self._grow()
        if self._height != old_height:
            self.refresh(layout=True)

    def _line_count(self) -> int:
        return len(self._frozen.lines) + len(self._live.lines)

    def _parse(self, *, final: bool) -> None:
        tail = self._tail()
        parsed = parse_blocks(tail, self._references)
        blocks = parsed.blocks
        cut_line: int | None = None
        if final:
            keep = len(blocks)
        else:
            # Freeze every block that a later block has closed, but only when that later block
            # starts on a complete line: a partial line ("```" that becomes "```x`") may still
            # turn out to continue the block before it.
            complete_lines = tail.count("\n")
            keep = next(
                (i for i in range(len(blocks) - 1, 0, -1) if blocks[i].start_line < complete_lines),
                0,
            )
            cut_line = blocks[keep].start_line if keep else 0
        if keep:
            cut = len(tail) if cut_line is None else line_start(tail, cut_line)
            self._frozen_chunks.append(tail[:cut])
            self._tail_chunks = [tail[cut:]] if cut < len(tail) else []
            self._references = self._frozen_references(parsed.references, cut_line)
            self._frozen.extend(blocks[:keep], self._width, separated=False)
        self._live = BlockLines()
        self._live.extend(blocks[keep:], self._width, separated=bool(self._frozen.blocks))
        self._pending = False

    def _frozen_references(self, found: dict[str, Any], cut_line: int | None) -> dict[str, Any]:
        # Definitions in frozen text resolve links in later blocks, as in a whole-text parse.
        if cut_line is None:
            return found
        return {
            label: ref
            for label, ref in found.items()
            if label in self._references or ref.get("map", (0, 0))[1] <= cut_line
        }

    def _ensure_width(self, width: int) -> None:
        if width != self._width and width > 0:
            # The blank room below streaming text stays: dropped, the transcript could fit its
            # view again, lose its scroll bar, widen, and take the room back, some ten layouts
            # in a row when an answer first overflows the screen.
            room = max(0, self._height - self._line_count()) if self._streaming else 0
            self._width = width
            self._frozen.relayout(width, separated=False)
            self._live.relayout(width, separated=bool(self._frozen.blocks))
            self._height = self._line_count() + room
            self._forget_strips()

    def _forget_strips(self) -> None:
        self._frozen_strips.clear()
        self._live_strips.clear()
        self._clear_painted()

    def _clear_painted(self) -> None:
        self._painted.clear()
        self._painted_blank = None

    def _forget_painted(self, first: int) -> None:
        """Painted lines from line `first` on are out of date."""
        for y in [y for y in self._painted.keys() if y >= first]:  # noqa: SIM118 (not a dict)
            self._painted.discard(y)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Height of the wrapped text at `width` (while streaming, as last revealed)."""
        self._ensure_width(width)
        if self._pending and not self.is_mounted:
            # Text that came before the view was mounted: measured as it is, not as nothing.
            # Measured as 0, the turn around it was laid out without it, and the growth found
            # in `on_mount` laid out the view alone: a short first answer showed as an empty
            # bubble (about 1 fresh thread in 20).
            self._update(final=not self._streaming)
        return self._height

    def render_lines(self, crop: Region) -> list[Strip]:
        """Paint `crop`; cached Strips carry the background, so drop them if it changed.

        While streaming (in the transcript: no padding, no border), painted lines are kept
        across height changes. Textual paints every visible line of a widget again after any
        change of its size, and the growing view changes height a few times a second; it also
        asks for every visible line on each frame. Kept, the same Strip objects come back (the
        compositor's own per-Strip caches then answer too), and only the changed tail lines and
        one blank line of the room below go through Textual's styles and filters.
        """
        base_style = self.rich_style
        if base_style != self._base_style:
            self._base_style = base_style
            self._styles = StyleSource(self._component_style)
            self._forget_strips()
        if not self._streaming or self.styles.gutter:
            if self._painted_with is not None:
                self._clear_painted()
                self._painted_with = None
            return super().render_lines(crop)
        return self._render_painted(crop)

    def _render_painted(self, crop: Region) -> list[Strip]:
        width = self.outer_size.width
        painted_with = (width, self._base_style, tuple(self.get_line_filters()))
        if painted_with != self._painted_with:
            self._clear_painted()
            self._painted_with = painted_with
        painted = self._painted
        blank_from = self._line_count()  # below the text, up to the height: blank room
        lines: list[Strip] = []
        missing_from: int | None = None
        for y in crop.line_range:
            strip = painted.get(y) if y < blank_from else self._painted_blank
            if strip is None and y < blank_from:
                if missing_from is None:
                    missing_from = y
                continue
            if missing_from is not None:
                lines += self._paint(missing_from, y, width)
                missing_from = None
            if strip is None:
                strip = self._painted_blank = self._paint(y, y + 1, width)[0]
            lines.append(strip)
        if missing_from is not None:
            lines += self._paint(missing_from, crop.bottom, width)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            lines = [strip.crop(x1, x2) for strip in lines]
        return lines

    def _paint(self, start: int, end: int, width: int) -> list[Strip]:
        """Lines `start` to `end` through Textual's styles and filters; text lines are kept for
        later frames."""
        strips = super().render_lines(Region(0, start, width, end - start))
        blank_from = self._line_count()
        for y, strip in enumerate(strips, start):
            if y < blank_from:
                self._painted.set(y, strip)
        return strips

    def render_line(self, y: int) -> Strip:
        """One line: frozen lines come from the Strip cache, tail lines are built on demand."""
        self._ensure_width(self.size.width)
        frozen = self._frozen.lines
        if y < len(frozen):
            strip = self._frozen_strips.get(y)
            if strip is None:
                strip = self._strip(frozen[y])
                self._frozen_strips.set(y, strip)
            return strip
        live = self._live.lines
        if y - len(frozen) >= len(live):
            return Strip.blank(self.size.width, self._base_style)
        # Tail Strips are kept by line number while the line stays the same (see _update).
        strip = self._live_strips.get(y)
        if strip is None:
            strip = self._live_strips[y] = self._strip(live[y - len(frozen)])
        return strip

    def _strip(self, line: Text) -> Strip:
        segments = Segment.apply_style(render_segments(line, self._styles), self._base_style)
        return Strip(segments, line.cell_len)

    def _component_style(self, name: str) -> Style | None:
        if name not in DEFAULT_STYLES:
            return None
        palette = self._palette
        if palette is None or not palette.is_attached:
            return DEFAULT_STYLES[name]
        styles = palette.get_component_styles(component_class(name))
        # Blend translucent TCSS colours over this view's own background, not the palette's.
        _, background = self.background_colors
        color = (background + styles.color).rich_color if styles.has_rule("color") else None
        bgcolor = (
            (background + styles.background).rich_color if styles.has_rule("background") else None
        )
        return Style.from_color(color, bgcolor) + styles.text_style

    def notify_style_update(self) -> None:
        """Theme or CSS changed: resolve the styles again and rebuild the Strips."""
        super().notify_style_update()
        self._styles = StyleSource(self._component_style)
        self._forget_strips()

    def on_click(self, event: events.Click) -> None:
        """A click on a link asks the screen to open it (the screen checks and confirms)."""
        meta = event.style.meta
        url = meta.get(LINK_URL_KEY)
        if isinstance(url, str):
            event.stop()
            label = meta.get(LINK_LABEL_KEY, "")
            self.post_message(OpenLinkRequested(url, label if isinstance(label, str) else ""))
