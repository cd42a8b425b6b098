"""ThreadList: rows, filter (diacritics too), keys and messages, and 5,000 threads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from textual.widgets import Button

from talkie_tui.protocol.talkie.models import Thread
from talkie_tui.ui.widgets.thread_list import ThreadList
from talkie_tui.ui.widgets.thread_rows import fold_text, relative_time
from tests.ui.apps.connect_app import steady_cursor
from tests.ui.apps.thread_list_app import NOW, ThreadListApp, sample_threads


def threads(count: int) -> list[Thread]:
    """`count` threads, newest first, a minute apart."""
    return [
        Thread(id=f"t{i}", title=f"Thread number {i}", updated_at=NOW - timedelta(minutes=i))
        for i in range(count)
    ]


# --- pure helpers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (timedelta(seconds=5), "now"),
        (timedelta(seconds=-30), "now"),
        (timedelta(minutes=3), "3 min"),
        (timedelta(minutes=59), "59 min"),
        (timedelta(hours=2), "2 h"),
        (timedelta(hours=20), "yesterday"),  # NOW is 15:30, so 20 h ago was yesterday evening
        (timedelta(days=2), "Mon"),
        (timedelta(days=12), "6 Mar"),
        (timedelta(days=500), "2024"),
    ],
)
def test_relative_time(age: timedelta, expected: str) -> None:
    assert relative_time(NOW - age, NOW, UTC) == expected


def test_relative_time_uses_the_given_zone() -> None:
    # 01:00 UTC on the 18th is still the 17th in New York (UTC-5 in March, before DST here).
    when = datetime(2026, 3, 18, 1, 0, tzinfo=UTC)
    now = datetime(2026, 3, 18, 6, 0, tzinfo=UTC)
    assert relative_time(when, now, UTC) == "5 h"
    assert relative_time(when, now, timezone(timedelta(hours=-5))) == "yesterday"
    assert relative_time(None, now) == ""
    assert relative_time(datetime(2026, 3, 18, 5, 0), now, UTC) == "1 h"  # naive means UTC


def test_fold_text_drops_case_and_diacritics() -> None:
    assert fold_text("Café NOVÁK Łódź Straße Zoë") == "cafe novak lodz strasse zoe"


# --- the widget -----------------------------------------------------------------------------


async def test_rows_and_default_highlight() -> None:
    app = ThreadListApp(sample_threads())
    async with app.run_test() as pilot:
        tl = app.thread_list
        await pilot.pause()
        assert tl.visible_thread_ids == [f"t{i}" for i in range(11)]
        assert tl.highlighted_thread_id == "t0"  # the newest thread, ready to open
        options = tl.options
        assert options.get_option_at_index(0).id == "thread:t0"  # the first row is a thread
        assert "+ New thread" in str(tl.query_one("#thread-new", Button).label)
        # Markup in a title is data: the option's row keeps it as literal text.
        row = options.get_option("thread:t3").prompt
        assert "[@click=app.quit]" in row.parts()[0].plain


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("cafe", ["t1"]),
        ("NOVAK", ["t0"]),
        ("novák", ["t0"]),
        ("lodz", ["t6"]),
        ("zoe renewal", ["t4"]),
        ("the", ["t4", "t10"]),
        ("nothing like this", []),
    ],
)
async def test_filter_is_case_and_diacritics_insensitive(typed: str, expected: list[str]) -> None:
    app = ThreadListApp(sample_threads())
    async with app.run_test() as pilot:
        app.thread_list.filter_input.focus()
        if len(typed) <= 5:  # typed for real; longer ones set at once (Pilot keys are slow)
            await pilot.press(*typed)
        else:
            app.thread_list.filter_input.value = typed
        await pilot.pause()
        assert app.thread_list.visible_thread_ids == expected
        if not expected:
            assert app.thread_list.options.get_option("no-threads").disabled


async def test_enter_in_the_filter_opens_the_best_match_and_escape_clears() -> None:
    app = ThreadListApp(sample_threads())
    async with app.run_test() as pilot:
        app.thread_list.filter_input.focus()
        await pilot.press(*"cafe", "enter")
        await pilot.pause()
        [selected] = app.posted
        assert isinstance(selected, ThreadList.Selected) and selected.thread_id == "t1"
        await pilot.press("escape")
        assert app.thread_list.filter_input.value == ""
        assert len(app.thread_list.visible_thread_ids) == 11
        assert app.thread_list.highlighted_thread_id == "t1"  # still on the opened thread


async def test_keys_post_messages() -> None:
    app = ThreadListApp(sample_threads())
    async with app.run_test() as pilot:
        tl = app.thread_list
        tl.filter_input.focus()
        await pilot.press("down")  # from the filter box into the list
        assert tl.options.has_focus
        await pilot.press("down", "enter")
        await pilot.press("delete")
        await pilot.press("n")
        await pilot.press("home", "enter")  # the first row: the newest thread
        await pilot.press("slash")
        await pilot.pause()
        kinds = [(type(m).__name__, getattr(m, "thread_id", None)) for m in app.posted]
        assert kinds == [
            ("Selected", "t1"),
            ("DeleteRequested", "t1"),
            ("NewRequested", None),
            ("Selected", "t0"),
        ]
        assert tl.filter_input.has_focus


async def test_find_agents_is_offered_only_where_the_server_lists_agents() -> None:
    app = ThreadListApp(sample_threads())
    async with app.run_test() as pilot:
        tl = app.thread_list
        find = tl.query_one("#thread-find", Button)
        tl.options.focus()
        await pilot.press("f")  # a server without a catalogue: nothing
        await pilot.pause()
        assert not find.display or find.region.height == 0
        assert app.posted == []

        tl.finds_agents = True  # a hub's catalogue: the button shows, and `f` asks too
        await pilot.pause()
        assert find.region.height == 1
        assert "Find agents" in str(find.label)
        await pilot.press("f")
        await pilot.click("#thread-find")
        await pilot.pause()
        kinds = [type(m).__name__ for m in app.posted]
        assert kinds == ["FindAgentsRequested", "FindAgentsRequested"]


async def test_down_from_the_filter_opens_the_first_result_not_a_new_thread() -> None:
    """↓ Enter from the filter opens the best match; "+ New thread" is a button, not a row."""
    app = ThreadListApp(sample_threads())
    async with app.run_test() as pilot:
        tl = app.thread_list
        tl.filter_input.focus()
        await pilot.press(*"cafe", "down")
        assert tl.options.has_focus and tl.highlighted_thread_id == "t1"
        await pilot.press("enter")
        await pilot.click("#thread-new")
        await pilot.pause()
        kinds = [(type(m).__name__, getattr(m, "thread_id", None)) for m in app.posted]
        assert kinds == [("Selected", "t1"), ("NewRequested", None)]


async def test_set_threads_keeps_the_highlighted_thread() -> None:
    app = ThreadListApp(sample_threads())
    async with app.run_test() as pilot:
        tl = app.thread_list
        tl.highlight_thread("t5")
        await pilot.pause()
        assert tl.highlighted_thread_id == "t5"
        # A new thread arrives on top: the highlight follows t5, not its old position.
        fresh = Thread(id="new", title="Brand new", updated_at=NOW)
        tl.set_threads([fresh, *sample_threads()])
        await pilot.pause()
        assert tl.highlighted_thread_id == "t5"
        # t5 is deleted elsewhere: the highlight falls back to the newest thread.
        tl.set_threads([t for t in sample_threads() if t.id != "t5"])
        await pilot.pause()
        assert tl.highlighted_thread_id == "t0"
        tl.set_threads([])
        await pilot.pause()
        assert tl.highlighted_thread_id is None
        assert tl.options.get_option("no-threads").disabled


async def test_duplicate_ids_do_not_break_the_list() -> None:
    app = ThreadListApp([Thread(id="x", title="one"), Thread(id="x", title="two")])
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.thread_list.options.option_count == 1  # one "x"


async def test_five_thousand_threads_are_listed_and_filtered() -> None:
    many = threads(5000)
    app = ThreadListApp(threads(10))
    async with app.run_test() as pilot:
        tl = app.thread_list
        tl.highlight_thread("t3")
        await pilot.pause()
        tl.set_threads(many)
        await pilot.pause()
        assert tl.options.option_count == 5000
        assert tl.highlighted_thread_id == "t3"
        # Each filter change rebuilds the list (its speed is a figure of benchmarks/).
        for text in ("number", "number 4", "number 4999"):
            tl.filter_input.value = text
            await pilot.pause()
        assert tl.visible_thread_ids == ["t4999"]


def test_snapshot_thread_list(snap_compare) -> None:
    async def prepare(pilot) -> None:  # type: ignore[no-untyped-def]
        steady_cursor(pilot.app)
        pilot.app.thread_list.highlight_thread("t2")
        await pilot.pause()

    assert snap_compare(ThreadListApp(sample_threads()), terminal_size=(60, 18), run_before=prepare)


def test_snapshot_thread_list_on_a_server_that_lists_agents(snap_compare) -> None:
    async def prepare(pilot) -> None:  # type: ignore[no-untyped-def]
        steady_cursor(pilot.app)
        pilot.app.thread_list.finds_agents = True
        pilot.app.thread_list.highlight_thread("t2")
        await pilot.pause()

    assert snap_compare(ThreadListApp(sample_threads()), terminal_size=(60, 18), run_before=prepare)
