"""A harness app with app and screen bindings, a ThreadList, F1 help and the command palette."""

from __future__ import annotations

from datetime import UTC
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from talkie_tui.ui.screens.help import HelpScreen
from talkie_tui.ui.support.palette import TalkieCommands
from talkie_tui.ui.widgets.thread_list import ThreadList
from tests.ui.apps.connect_app import stylesheets
from tests.ui.apps.thread_list_app import NOW, sample_threads


class SampleChatScreen(Screen[None]):
    """Stands in for the chat screen: its own keys and a thread list."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "app.new_thread", "New thread"),
        Binding("ctrl+e", "app.export_thread", "Export the thread as Markdown"),
        Binding("ctrl+b", "app.toggle_sidebar", "Show or hide the thread list", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static("Chat")
        yield ThreadList(sample_threads()[:3], now=lambda: NOW, tz=UTC)


class HelpApp(App[None]):
    """Records which app actions ran; F1 opens help."""

    CSS_PATH = stylesheets("help", "threads")  # type: ignore[assignment]
    COMMANDS = App.COMMANDS | {TalkieCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1,question_mark", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]
    ACTIONS = (
        "new_thread",
        "switch_server",
        "sign_in",
        "sign_out",
        "export_thread",
        "toggle_sidebar",
        "voice_call",
        "hang_up",
        "voice_mode",
        "choose_model",
        "attach",
        "reply",
        "dictate",
    )

    def __init__(self, *, hidden: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.ran: list[str] = []
        self.hidden = hidden

    def on_mount(self) -> None:
        self.push_screen(SampleChatScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action not in self.hidden

    def action_help(self) -> None:
        self.ran.append("help")
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(newline_key="ctrl+j"))

    def _record(self, name: str) -> None:
        self.ran.append(name)

    def action_new_thread(self) -> None:
        self._record("new_thread")

    def action_switch_server(self) -> None:
        self._record("switch_server")

    def action_sign_in(self) -> None:
        self._record("sign_in")

    def action_sign_out(self) -> None:
        self._record("sign_out")

    def action_export_thread(self) -> None:
        self._record("export_thread")

    def action_toggle_sidebar(self) -> None:
        self._record("toggle_sidebar")

    def action_voice_call(self) -> None:
        self._record("voice_call")

    def action_hang_up(self) -> None:
        self._record("hang_up")

    def action_voice_mode(self) -> None:
        self._record("voice_mode")

    def action_choose_model(self) -> None:
        self._record("choose_model")

    def action_attach(self) -> None:
        self._record("attach")

    def action_reply(self) -> None:
        self._record("reply")

    def action_dictate(self) -> None:
        self._record("dictate")

    def action_devices(self) -> None:
        self._record("devices")

    def action_add_by_code(self) -> None:
        self._record("add_by_code")

    def action_find_agents(self) -> None:
        self._record("find_agents")

    def action_contact(self) -> None:
        self._record("contact")

    def action_archived(self) -> None:
        self._record("archived")
