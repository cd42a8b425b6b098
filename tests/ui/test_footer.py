"""The footer does not keep the keys it replaced (Textual issue #6666, see TalkieFooter)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets._footer import FooterKey

from talkie_tui.ui.widgets.footer import TalkieFooter
from tests.ui.flows import FAST, chat_screen, make_app, send, until


async def test_replaced_keys_are_forgotten(devserver, tmp_path: Path) -> None:
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        footer = screen.query_one(TalkieFooter)
        for n in range(4):  # each run changes the bindings twice (answering, then not)
            await send(pilot, screen, f"talkie-test:echo run {n}")
        await pilot.pause(0.2)
        watching = getattr(footer, "__watchers")["compact"]
        shown = list(footer.query(FooterKey))
        assert watching and shown
        # Every watcher belongs to a key on screen: none to a key replaced earlier.
        assert {id(node) for node, _callback in watching} <= {id(key) for key in shown}


async def test_a_key_that_becomes_usable_is_marked_in_place(devserver, tmp_path: Path) -> None:
    """Esc's "Stop answer" is usable only while an answer runs: the same keys are marked, not
    rebuilt (a rebuild stalled the first frames of every answer by 20-40 ms)."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        footer = screen.query_one(TalkieFooter)
        await pilot.pause(0.2)
        before = list(footer.query(FooterKey))
        stop = next(key for key in before if key.key == "escape")
        assert stop.has_class("-disabled")
        screen.composer.insert("talkie-test:slow")
        await pilot.press("enter")
        await until(pilot, lambda: not stop.has_class("-disabled"))
        assert list(footer.query(FooterKey)) == before
        await until(pilot, lambda: not screen.answering, timeout=20)
        await pilot.pause(0.2)
        assert stop.has_class("-disabled") and stop._disabled
        assert list(footer.query(FooterKey)) == before
