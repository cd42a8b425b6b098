"""MarkdownView: streaming equals rendering at once, frozen blocks, reflow, links, snapshots."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region, Size
from textual.pilot import Pilot

from talkie_tui.ui.support.markdown import parse_blocks
from talkie_tui.ui.widgets import markdown_view
from talkie_tui.ui.widgets.markdown_palette import MarkdownPalette
from talkie_tui.ui.widgets.markdown_view import MarkdownView
from tests.ui.apps.markdown_app import ANSWER, MarkdownApp
from tests.ui.flows import FAST, chat_screen, make_app, send


@pytest.fixture
def instant(monkeypatch: pytest.MonkeyPatch) -> None:
    """Flush and grow on the next turn of the loop instead of at most 24 and 10 times a second,
    without blank room below fast text."""
    monkeypatch.setattr(markdown_view, "FRAME_INTERVAL", 0.0)
    monkeypatch.setattr(markdown_view, "GROW_INTERVAL", 0.0)
    monkeypatch.setattr(markdown_view, "RESERVE_PERIOD", 0.0)


def painted(view: MarkdownView) -> list[list[tuple[str, object]]]:
    """Every line as the widget paints it: (text, style) per segment."""
    return [
        [(segment.text, segment.style) for segment in view.render_line(y)]
        for y in range(view.size.height)
    ]


def painted_text(view: MarkdownView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.size.height)]


def deltas(text: str) -> list[str]:
    """Irregular chunks (1 to 7 characters), like a model's tokens."""
    sizes = itertools.cycle([1, 4, 7, 2, 3, 5, 6])
    out, start = [], 0
    while start < len(text):
        size = next(sizes)
        out.append(text[start : start + size])
        start += size
    return out


async def stream(pilot: Pilot[None], view: MarkdownView, text: str) -> tuple[int, int]:
    """Append `text` in small deltas with a frame between some; return (max live, max frozen)."""
    max_live = max_frozen = 0
    for index, delta in enumerate(deltas(text)):
        view.append(delta)
        if index % 3 == 0:
            await pilot.pause()
            max_live = max(max_live, view.live_block_count)
            max_frozen = max(max_frozen, view.frozen_block_count)
    await pilot.pause()
    return max_live, max_frozen


async def test_streamed_text_paints_exactly_like_the_same_text_at_once(instant: None) -> None:
    streamed, whole = MarkdownView(streaming=True), MarkdownView(ANSWER)
    app = MarkdownApp(streamed, whole)
    async with app.run_test(size=(70, 100)) as pilot:
        await stream(pilot, streamed, ANSWER)
        assert streamed.text == ANSWER
        assert streamed.links == whole.links
        assert painted(streamed) == painted(whole)
        streamed.finish()
        await pilot.pause()
        assert painted(streamed) == painted(whole)


TRICKY = """\
Setext heading
==============
para line one
lazy continuation
> quote
lazy quote line

- item

  continued paragraph in the item
- second
* other bullet kind
~~~
fence with ~~~ and ``` inside
~~~

    indented code block

[ref]: https://example.com/ref "Title"

Use [ref] and [missing].
Final *emphasis
across lines* done.
***
1) one
2) two
"""


async def test_streaming_character_by_character_matches_a_whole_parse() -> None:
    """Freezing after every single character must not change any block (setext, lazy lines…)."""
    streamed = MarkdownView(streaming=True)
    for character in TRICKY:
        streamed.append(character)
        assert streamed.links is not None  # forces a parse of the pending text, as a flush does
    whole = MarkdownView(TRICKY)
    async with MarkdownApp(streamed, whole).run_test(size=(60, 80)) as pilot:
        assert streamed.frozen_block_count > 5
        assert painted(streamed) == painted(whole)
        streamed.finish()
        await pilot.pause()
        assert painted(streamed) == painted(whole)
        assert streamed.links == whole.links == [("ref", "https://example.com/ref")]


async def test_frozen_blocks_grow_while_the_live_tail_stays_small(instant: None) -> None:
    view = MarkdownView(streaming=True)
    app = MarkdownApp(view)
    async with app.run_test(size=(70, 60)) as pilot:
        seen: list[tuple[int, int]] = []
        for line in ANSWER.splitlines(keepends=True):
            view.append(line)
            await pilot.pause()
            seen.append((view.frozen_block_count, view.live_block_count))
        frozen = [count for count, _ in seen]
        assert frozen == sorted(frozen)
        blocks = len(parse_blocks(ANSWER).blocks)
        assert frozen[-1] == blocks - 1
        assert all(live == 1 for _, live in seen)
        view.finish()
        await pilot.pause()
        assert (view.frozen_block_count, view.live_block_count) == (blocks, 0)


async def test_a_partial_line_never_freezes_the_block_before_it(instant: None) -> None:
    view = MarkdownView(streaming=True)
    async with MarkdownApp(view).run_test() as pilot:
        view.append("para\n```")  # would open a fence, but the line may still become "```x`"
        await pilot.pause()
        assert view.frozen_block_count == 0
        view.append("x`\nmore")
        await pilot.pause()
        view.finish()
        await pilot.pause()
        assert painted_text(view) == ["para", "```x`", "more"]


async def test_deltas_are_coalesced_into_at_most_one_render_per_frame() -> None:
    view = MarkdownView(streaming=True)
    async with MarkdownApp(view).run_test() as pilot:
        renders = 0
        original = view._update

        def counting(*, final: bool) -> None:
            nonlocal renders
            renders += 1
            original(final=final)

        view._update = counting  # type: ignore[method-assign]
        for delta in deltas("word " * 400):
            view.append(delta)
        await pilot.pause()
        assert 1 <= renders <= 3
        assert view.text == "word " * 400


async def test_finish_leaves_exactly_one_frozen_widget(instant: None) -> None:
    view = MarkdownView(streaming=True)
    app = MarkdownApp(view)
    async with app.run_test(size=(70, 60)) as pilot:
        await stream(pilot, view, ANSWER)
        view.finish()
        await pilot.pause()
        assert not view.streaming
        assert list(view.walk_children()) == []
        assert view.live_block_count == 0
        assert len(app.query(MarkdownView)) == 1
        with pytest.raises(RuntimeError):
            view.append("more")


async def test_a_finished_message_is_one_widget_and_one_palette_serves_all() -> None:
    views = [MarkdownView(ANSWER) for _ in range(20)]
    app = MarkdownApp(*views)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert all(list(view.walk_children()) == [] for view in views)
        assert all(not view.streaming and view.live_block_count == 0 for view in views)
        assert len(app.screen.query(MarkdownPalette)) == 1


async def test_resize_reflows_the_text() -> None:
    view = MarkdownView("word " * 60)
    app = MarkdownApp(view)
    async with app.run_test(size=(80, 40)) as pilot:
        wide = painted_text(view)
        await pilot.resize_terminal(30, 40)
        narrow = painted_text(view)
        assert len(narrow) > len(wide)
        assert all(len(line) <= view.size.width for line in narrow)
        assert " ".join(narrow).split() == " ".join(wide).split()


async def click_text(pilot: Pilot[None], view: MarkdownView, fragment: str) -> None:
    for y in range(view.size.height):
        x = view.render_line(y).text.find(fragment)
        if x >= 0:
            await pilot.click(view, offset=(x + 1, y))
            return
    raise AssertionError(f"{fragment!r} is not painted")


async def test_clicking_a_link_posts_open_link_requested() -> None:
    view = MarkdownView(ANSWER)
    app = MarkdownApp(view)
    async with app.run_test(size=(100, 50)) as pilot:
        await click_text(pilot, view, "the CRM record")
        await click_text(pilot, view, "⟨https://crm.example.com")
        await click_text(pilot, view, "Renewal summary")
        await pilot.pause()
        assert [(m.url, m.label) for m in app.opened] == [
            ("https://crm.example.com/a/42", "the CRM record"),
            ("https://crm.example.com/a/42", "the CRM record"),
        ]


async def test_markup_in_server_text_is_inert_when_clicked() -> None:
    view = MarkdownView("Do not run [@click=app.quit]this[/] or [b]that[/b].")
    app = MarkdownApp(view)
    async with app.run_test() as pilot:
        assert painted_text(view) == ["Do not run [@click=app.quit]this[/] or [b]that[/b]."]
        await click_text(pilot, view, "this")
        await pilot.pause()
        assert app.is_running
        assert app.opened == []


async def test_links_lists_every_link_in_order() -> None:
    view = MarkdownView(streaming=True)
    async with MarkdownApp(view).run_test():
        view.append("[a](https://a.example) and ")
        view.append("[b](https://b.example)\n\n- <https://c.example>")
        assert view.links == [
            ("a", "https://a.example"),
            ("b", "https://b.example"),
            ("https://c.example", "https://c.example"),
        ]


async def test_a_theme_change_repaints_the_cached_lines() -> None:
    view = MarkdownView("[link](https://e.example)")
    app = MarkdownApp(view)
    async with app.run_test() as pilot:
        before = painted(view)
        app.theme = "textual-light"
        await pilot.pause()
        assert painted(view) != before
        assert painted_text(view) == ["link ⟨https://e.example⟩"]


def test_snapshot_finished_answer(snap_compare) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(MarkdownApp(MarkdownView(ANSWER)), terminal_size=(80, 36))


def test_snapshot_answer_while_streaming(snap_compare) -> None:  # type: ignore[no-untyped-def]
    view = MarkdownView(streaming=True)

    async def half_way(pilot: Pilot[None]) -> None:
        # Cut inside the code fence: the fence is the live tail, everything above is frozen.
        view.append(ANSWER[: ANSWER.index("    return")])
        await pilot.pause()

    assert snap_compare(MarkdownApp(view), terminal_size=(80, 36), run_before=half_way)


class FakeClock:
    """`monotonic` for the view: time moves only when a test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(markdown_view, "monotonic", fake)
    return fake


def text_lines(view: MarkdownView) -> int:
    return view.frozen_line_count + view.live_line_count


async def stream_lines(
    pilot: Pilot[None], view: MarkdownView, clock: FakeClock, lines: int, per_second: float
) -> list[int]:
    """Append `lines` one-line paragraphs at `per_second` (fake time); the heights seen."""
    heights = []
    for number in range(lines):
        clock.now += 1 / per_second
        view.append(f"line {number}\n\n")
        view._flush()
        await pilot.pause()
        heights.append(view.size.height)
    return heights


async def test_fast_text_grows_in_steps_into_blank_room(clock: FakeClock) -> None:
    view = MarkdownView(streaming=True)
    async with MarkdownApp(view).run_test(size=(60, 40)) as pilot:
        heights = await stream_lines(pilot, view, clock, 60, per_second=20)  # 40 lines/s
        # Past the first measure, the view grows by the lines of ~RESERVE_PERIOD at once…
        assert view.size.height > text_lines(view)
        assert view.size.height - text_lines(view) <= 40 * markdown_view.RESERVE_PERIOD + 2
        grows = sum(1 for a, b in itertools.pairwise(heights) if b != a)
        assert grows < len(heights) / 3
        # …the room is blank, and every line that arrived is painted at once.
        assert painted_text(view)[text_lines(view) :] == [""] * (
            view.size.height - text_lines(view)
        )
        assert painted_text(view)[text_lines(view) - 1] == "line 59"
        view.finish()
        await pilot.pause()
        assert view.size.height == text_lines(view)
        whole = MarkdownView(view.text)
        await pilot.app.mount(whole)
        await pilot.pause()
        assert painted(view) == painted(whole)


async def test_slow_text_gets_no_room_and_a_pause_gives_the_room_back(clock: FakeClock) -> None:
    view = MarkdownView(streaming=True)
    async with MarkdownApp(view).run_test(size=(60, 40)) as pilot:
        heights = await stream_lines(pilot, view, clock, 8, per_second=1)  # 2 lines/s
        assert heights[-1] == text_lines(view)
        await stream_lines(pilot, view, clock, 30, per_second=20)
        assert view.size.height > text_lines(view)
        clock.now += markdown_view.RESERVE_RELEASE  # no text for a while: a tool runs
        view._release()
        await pilot.pause()
        assert view.streaming and view.size.height == text_lines(view)


async def test_a_growing_line_repaints_only_the_lines_that_changed(instant: None) -> None:
    view = MarkdownView(streaming=True)
    async with MarkdownApp(view).run_test(size=(40, 30)) as pilot:
        view.append("# Title\n\n" + "word " * 30)  # a paragraph of four lines
        await pilot.pause()
        dirty: list[Region] = []
        original = view.refresh

        def recording(*regions: Region, **kwargs: bool) -> MarkdownView:
            dirty.extend(regions)
            return original(*regions, **kwargs)

        view.refresh = recording  # type: ignore[method-assign]
        view.append("more")
        view._flush()
        last = text_lines(view) - 1
        assert dirty == [Region(0, last, view.size.width, 1)]
        assert painted_text(view)[last].endswith("word more")


def screen_lines(view: MarkdownView) -> list[list[tuple[str, object]]]:
    """Every line as the compositor gets it (styles and filters applied)."""
    width, height = view.outer_size
    return [
        [(segment.text, segment.style) for segment in strip]
        for strip in view.render_lines(Region(0, 0, width, height))
    ]


async def test_lines_painted_while_streaming_are_kept_across_growth(clock: FakeClock) -> None:
    view = MarkdownView(streaming=True)
    async with MarkdownApp(view).run_test(size=(60, 40)) as pilot:
        await stream_lines(pilot, view, clock, 30, per_second=20)
        width = view.outer_size.width
        before = view.render_lines(Region(0, 0, width, text_lines(view)))
        height = view.size.height
        while view.size.height == height:  # until the view grows again
            await stream_lines(pilot, view, clock, 1, per_second=20)
        after = view.render_lines(Region(0, 0, width, view.outer_size.height))
        # The text that was there comes back as the very same Strips, blank room as one…
        assert all(new is old for new, old in zip(after[: len(before) - 1], before, strict=False))
        blank = after[text_lines(view) :]
        assert blank and all(strip is blank[0] for strip in blank)
        # …and what reaches the screen is what Textual's own painting gives once it ends.
        streaming = screen_lines(view)
        assert {text for line in streaming[text_lines(view) :] for text, _ in line} == {" " * width}
        view.finish()
        await pilot.pause()
        assert screen_lines(view) == streaming[: text_lines(view)]


async def test_screen_lines_while_streaming_and_after_match_the_same_text_at_once(
    instant: None,
) -> None:
    streamed, whole = MarkdownView(streaming=True), MarkdownView(ANSWER)
    async with MarkdownApp(streamed, whole).run_test(size=(70, 100)) as pilot:
        for index, delta in enumerate(deltas(ANSWER)):
            streamed.append(delta)
            if index % 5 == 0:
                await pilot.pause()
                screen_lines(streamed)  # painted and kept mid-stream
        await pilot.pause()
        assert screen_lines(streamed) == screen_lines(whole)
        streamed.finish()
        await pilot.pause()
        assert screen_lines(streamed) == screen_lines(whole)


async def test_an_answer_overflowing_the_screen_shows_the_scroll_bar_once(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the real app, fast text first overflows the transcript: its scroll bar appears once
    and stays. The blank room below streaming text survives the narrower width; dropped, the
    transcript fit again, lost the bar, widened, and overflowed once more, ten layouts in a row.

    The room also goes, by design, when text stops coming for a while (a tool runs): a loaded
    machine's pause in the stream is not this scenario, so that release waits longer here."""
    monkeypatch.setattr(markdown_view, "RESERVE_RELEASE", 60.0)
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        transcript = screen.transcript
        shown: list[bool] = [transcript.show_vertical_scrollbar]
        refresh_scrollbars = transcript._refresh_scrollbars

        def record() -> None:
            refresh_scrollbars()
            if shown[-1] != transcript.show_vertical_scrollbar:
                shown.append(transcript.show_vertical_scrollbar)

        transcript._refresh_scrollbars = record  # type: ignore[method-assign]
        await send(pilot, screen, "talkie-test:markdown 1000 500 7")
        assert shown == [False, True]


def test_text_that_came_before_the_mount_is_measured() -> None:
    """A streamed answer's first text can reach its view before the view is mounted: the
    layout that measures the view then (and the turn around it) must count that text. Measured
    as nothing, a short first answer showed as an empty bubble."""
    view = MarkdownView("", streaming=True)
    view.append("The whole answer, before the view was mounted.")
    size = Size(80, 24)
    assert view.get_content_height(size, size, 80) == 1


async def test_fifty_fresh_threads_each_show_their_first_answer(
    devserver: Any, tmp_path: Path
) -> None:
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        for number in range(50):
            await pilot.press("ctrl+n")
            word = f"answer{number}"
            await send(pilot, screen, f"talkie-test:echo {word}")
            await pilot.pause()
            [turn_view] = [
                view
                for view in screen.transcript.query("TurnView")
                if getattr(view, "turn", None) is not None and view.turn.role == "assistant"
            ]
            [text] = turn_view.query(MarkdownView)
            assert text.text == word
            assert turn_view.size.height >= 2 and text.size.height == 1  # the role, the text
