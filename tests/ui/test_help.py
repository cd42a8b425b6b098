"""F1 help (generated from BINDINGS) and the command palette provider."""

from __future__ import annotations

from textual.binding import Binding
from textual.command import CommandPalette
from textual.widgets import Static

from talkie_tui.ui.screens.help import HelpGroup, HelpScreen, describe_key
from talkie_tui.ui.support.palette import COMMANDS, TalkieCommands
from tests.ui.apps.connect_app import steady_cursor
from tests.ui.apps.help_app import HelpApp


def help_rows(app: HelpApp) -> dict[str, list[tuple[str, str]]]:
    """What the open help screen shows, group title -> [(keys, description)]."""
    groups: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for widget in app.screen.query("#help-scroll Static"):
        assert isinstance(widget, Static)
        text = str(widget.content)
        if widget.has_class("help-group"):
            current = groups.setdefault(text, [])
        elif widget.has_class("help-key"):
            current.append((text, ""))
        elif widget.has_class("help-what"):
            current[-1] = (current[-1][0], text)
    return groups


def test_describe_key() -> None:
    assert describe_key("ctrl+p") == "Ctrl+P"
    assert describe_key("f1") == "F1"
    assert describe_key("question_mark") == "?"
    assert describe_key("delete") == "Del"
    assert describe_key("shift+enter") == "Shift+Enter"
    assert describe_key("n") == "n"


def test_help_group_folds_keys_of_one_action() -> None:
    group = HelpGroup("x")
    group.add(
        [
            Binding("f1", "help", "Help"),
            Binding("question_mark", "help", "Help"),
            Binding("ctrl+c", "help_quit", system=True),
            Binding("ctrl+s", "save_it"),
            Binding("ctrl+l", "clear", "Clear", key_display="^L"),
        ]
    )
    assert group.rows == [("F1, ?", "Help"), ("Ctrl+S", "Save it"), ("^L", "Clear")]


async def test_help_lists_every_binding_grouped() -> None:
    app = HelpApp()
    async with app.run_test(size=(90, 40)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        groups = help_rows(app)
        assert list(groups) == ["Sample chat screen", "Thread list", "Everywhere", "Good to know"]
        assert ("Ctrl+E", "Export the thread as Markdown") in groups["Sample chat screen"]
        assert ("Ctrl+B", "Show or hide the thread list") in groups["Sample chat screen"]
        assert ("Del", "Delete thread") in groups["Thread list"]
        assert ("n", "New thread") in groups["Thread list"]
        everywhere = dict(groups["Everywhere"])
        assert everywhere["F1, ?"] == "Help"
        assert everywhere["Ctrl+Q"] == "Quit"
        assert everywhere["Ctrl+P"] == "Command palette"
        assert everywhere["Tab"] == "Focus Next"
        notes = dict(groups["Good to know"])
        assert notes["Ctrl+J"].startswith("New line")
        assert "https:" in notes["Links"]
        assert "Ctrl+O goes to it" in notes["Decisions"]


async def test_help_follows_new_bindings() -> None:
    app = HelpApp()
    async with app.run_test(size=(90, 40)) as pilot:
        app.bind("ctrl+t", "toggle_dark", description="Light or dark")
        await pilot.press("f1")
        await pilot.pause()
        assert ("Ctrl+T", "Light or dark") in help_rows(app)["Everywhere"]


async def test_escape_f1_and_q_close_help() -> None:
    app = HelpApp()
    async with app.run_test(size=(90, 40)) as pilot:
        for key in ("escape", "f1", "q"):
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            await pilot.press(key)
            await pilot.pause()
            assert not isinstance(app.screen, HelpScreen), key


def test_snapshot_help(snap_compare) -> None:
    async def prepare(pilot) -> None:  # type: ignore[no-untyped-def]
        steady_cursor(pilot.app)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(HelpApp(), terminal_size=(80, 24), run_before=prepare)


# --- command palette ----------------------------------------------------------------------


async def palette_names(app: HelpApp, pilot, query: str = "") -> list[str]:  # type: ignore[no-untyped-def]
    await pilot.press("ctrl+p")
    await pilot.pause()
    assert isinstance(app.screen, CommandPalette)
    if query:
        await pilot.press(*query)
    await app.screen.workers.wait_for_complete()
    await pilot.pause(0.1)
    options = app.screen.query_one("CommandList")
    return [str(option.prompt).split("\n")[0] for option in options.options]


async def test_provider_matches_and_runs_each_command() -> None:
    app = HelpApp()
    async with app.run_test(size=(90, 30)) as pilot:
        provider = TalkieCommands(app.screen)
        discovered = [hit.text async for hit in provider.discover()]
        assert discovered == [command.name for command in COMMANDS]
        for command in COMMANDS:
            hits = [hit async for hit in provider.search(command.name.lower()[:6])]
            best = max(hits, key=lambda hit: hit.score)
            assert best.text == command.name
            await best.command()
            await pilot.pause()
            if isinstance(app.screen, HelpScreen):
                app.screen.dismiss(None)
        assert app.ran == [command.action for command in COMMANDS]


async def test_palette_runs_the_chosen_command() -> None:
    app = HelpApp()
    async with app.run_test(size=(90, 30)) as pilot:
        names = await palette_names(app, pilot)
        for command in COMMANDS:
            assert any(command.name in name for name in names), (command.name, names)
        await pilot.press(*"expo")
        await app.screen.workers.wait_for_complete()
        await pilot.pause(0.1)
        await pilot.press("enter")
        await pilot.pause()
        assert app.ran == ["export_thread"]


async def test_palette_hides_commands_the_app_disables() -> None:
    app = HelpApp(hidden=frozenset({"export_thread", "sign_out"}))
    async with app.run_test(size=(90, 30)) as pilot:
        names = " ".join(await palette_names(app, pilot))
        assert "Export thread" not in names and "Sign out" not in names
        assert "New thread" in names and "Switch server" in names
