"""The chat screen paints only the lines a frame changed, and the terminal gets the same bytes.

LineCompositor renders each widget only within an update's rows (and skips widgets outside its
columns); Textual's own compositor renders every overlapping widget whole. Here both render the
same partial updates of the real app at the same moment, and their escape sequences must be
equal: every frame of a streamed answer, then random regions of the final screen.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from rich.segment import Segment
from textual._compositor import ChopsUpdate, Compositor
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.support.compositor import LineCompositor, RepaintedByLayout
from tests.ui.flows import FAST, chat_screen, make_app, send


def partial_update(compositor: Compositor, regions: set[Region], kind: type[Compositor]) -> str:
    """What `kind` of compositor writes to the terminal for `regions` on `compositor`'s screen."""
    real_kind = type(compositor)
    compositor.__class__ = kind
    try:
        compositor._dirty_regions.update(regions)
        update = Compositor.render_partial_update(compositor)
    finally:
        compositor.__class__ = real_kind
    return "" if update is None else update.render_segments(CONSOLE)


CONSOLE: Any = None


async def test_every_partial_update_writes_what_textual_would(devserver, tmp_path: Path) -> None:
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        global CONSOLE
        CONSOLE = app.console
        screen = await chat_screen(app, pilot)
        compositor = screen._compositor
        assert isinstance(compositor, LineCompositor)
        compared: list[int] = []
        real_update = compositor.render_partial_update

        def both() -> ChopsUpdate | None:
            regions = set(compositor._dirty_regions)
            if regions:
                ours = partial_update(compositor, regions, LineCompositor)
                assert ours == partial_update(compositor, regions, Compositor)
                compared.append(len(ours))
                compositor._dirty_regions.update(regions)
            return real_update()

        compositor.render_partial_update = both  # type: ignore[method-assign]
        await send(pilot, screen, "talkie-test:markdown 1500 1500 3")
        assert len(compared) >= 5 and min(compared) > 0  # about 24 frames a second

        rng = random.Random(5)
        for _ in range(200):
            x, y = rng.randrange(120), rng.randrange(40)
            region = Region(x, y, rng.randint(1, 120 - x), rng.randint(1, 40 - y))
            ours = partial_update(compositor, {region}, LineCompositor)
            assert ours == partial_update(compositor, {region}, Compositor), region


async def test_only_the_changed_rows_are_rendered(devserver, tmp_path: Path) -> None:
    """A two-line update asks each widget in those rows for two lines, not all of them."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:markdown 400 0 3")
        asked: list[int] = []
        for widget in screen.query("*"):
            real = widget.render_lines
            widget.render_lines = lambda crop, real=real: asked.append(crop.height) or real(crop)  # type: ignore[method-assign]
        assert isinstance(screen, ChatScreen)
        update = screen._compositor
        transcript = screen.transcript.region
        update._dirty_regions.add(Region(transcript.x + 4, transcript.y + 10, 20, 2))
        update.render_partial_update()
        assert asked and max(asked) == 2


class Lines(Widget):
    """A widget of `count` numbered lines, that grows like a streaming answer."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 12

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.count

    def render_line(self, y: int) -> Strip:
        return Strip([Segment(f"line {y}".ljust(self.size.width))])

    def grow(self) -> None:
        self.count += 1
        self.refresh(Region(0, self.count - 1, self.size.width, 1), layout=True)


class GrowingLines(RepaintedByLayout, Lines):
    """The same, taking its new size from the layout that found it."""


class GrowingScroll(RepaintedByLayout, VerticalScroll):
    """A scrolling container that keeps VerticalScroll's styles."""


class GrowingApp(App[None]):
    CSS = "Lines { height: auto; }"

    def __init__(self, container: VerticalScroll, lines: Lines) -> None:
        super().__init__()
        self.container, self.lines = container, lines

    def compose(self) -> ComposeResult:
        with self.container:
            yield self.lines


async def repaints_of_a_growth(container: VerticalScroll, lines: Lines) -> tuple[int, int]:
    """After one more line at the bottom: how many frames repaint the whole container, and how
    many repaint anything."""
    app = GrowingApp(container, lines)
    async with app.run_test(size=(40, 10)) as pilot:
        container.anchor()
        await pilot.pause()
        # VerticalScroll's own CSS still applies: overflow shows a scroll bar.
        assert container.styles.overflow_y == "auto"
        assert container.show_vertical_scrollbar and container.virtual_size.height == 12
        screen = app.screen
        frames: list[set[Region]] = []
        real_refresh = screen._compositor_refresh

        def record() -> None:
            frames.append(set(screen._compositor._dirty_regions))
            real_refresh()

        screen._compositor_refresh = record  # type: ignore[method-assign]
        lines.grow()
        for _ in range(5):
            await pilot.pause(0.02)
        assert container.scroll_y == container.max_scroll_y == 3
        assert app.screen._compositor.render_strips()[9].text.startswith("line 12")
        return (
            sum(any(container.region in r for r in regions) for regions in frames),
            sum(bool(regions) for regions in frames),
        )


async def test_a_growth_is_repainted_by_its_layout_alone() -> None:
    # Textual's own: the layout's frame, then the container and the bar (and the old area of
    # the view) once more.
    assert await repaints_of_a_growth(VerticalScroll(), Lines()) == (2, 2)
    assert await repaints_of_a_growth(GrowingScroll(), GrowingLines()) == (1, 1)
