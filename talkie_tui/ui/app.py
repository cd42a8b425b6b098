"""TalkieApp: the connect screen, then the chat screen of the chosen server."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType

from talkie_tui.config import KnownServers, Settings
from talkie_tui.protocol.client import TalkieClient

from .commands import TalkieCommands
from .screens.chat import ChatScreen
from .screens.connect import ConnectFunction, ConnectScreen
from .screens.help import HelpScreen

__all__ = ["TalkieApp"]

STYLES = Path(__file__).parent / "styles"


def _stylesheets() -> list[Path]:
    """app.tcss first, then every other stylesheet of the UI in name order."""
    sheets = sorted(STYLES.glob("*.tcss"))
    return sorted(sheets, key=lambda path: path.name != "app.tcss")


class TalkieApp(App[None]):
    """The talkie terminal client."""

    TITLE = "talkie"
    CSS_PATH = _stylesheets()  # type: ignore[assignment]
    COMMANDS = App.COMMANDS | {TalkieCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        address: str | None = None,
        *,
        token: str | None = None,
        thread_id: str | None = None,
        settings: Settings | None = None,
        known: KnownServers | None = None,
        allow_private_http: bool = False,
        client: TalkieClient | None = None,
        connect: ConnectFunction | None = None,
    ) -> None:
        self.client = client  # set first: the stylesheet asks for the server's accent
        super().__init__()
        self.settings = settings or Settings.load()
        self.known = known or KnownServers.load()
        self._address = address
        self._token = token
        self._initial_thread_id = thread_id
        self._allow_private_http = allow_private_http or self.settings.allow_private_http
        self._connect_fn = connect
        if self.settings.theme:
            self.theme = self.settings.theme

    def get_css_variables(self) -> dict[str, str]:
        """Theme variables plus `$server-accent`, the connected server's brand colour."""
        variables = super().get_css_variables()
        accent = self.client.server.manifest.brand.accent if self.client else None
        variables["server-accent"] = accent or variables.get("accent", "#0178d4")
        return variables

    def on_mount(self) -> None:
        if self.client is not None:
            self._open_chat(self.client)
        else:
            self.push_screen(self._connect_screen(self._address))

    def _connect_screen(self, address: str | None) -> ConnectScreen:
        return ConnectScreen(
            address,
            token=self._token,
            known=self.known,
            allow_private_http=self._allow_private_http,
            connect=self._connect_fn,
        )

    @on(ConnectScreen.Connected)
    def _connected(self, event: ConnectScreen.Connected) -> None:
        self._open_chat(event.client)

    def _open_chat(self, client: TalkieClient) -> None:
        self.client = client
        self.refresh_css(animate=False)
        self.sub_title = client.server.manifest.name
        screen = ChatScreen(
            client,
            thread_id=self._initial_thread_id,
            downloads_dir=self.settings.downloads_dir,
            show_sidebar=self.settings.show_sidebar,
            newline_key=self.settings.newline_key,
        )
        self._initial_thread_id = None
        if isinstance(self.screen, ConnectScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def _chat(self) -> ChatScreen | None:
        return self.screen if isinstance(self.screen, ChatScreen) else None

    # --- actions (bindings and the command palette) --------------------------------------

    def action_help(self) -> None:
        """Show every key binding."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(newline_key=self.settings.newline_key))

    def action_new_thread(self) -> None:
        """Start a new thread."""
        if chat := self._chat():
            chat.action_new_thread()

    def action_export_thread(self) -> None:
        """Export the thread to Markdown."""
        if chat := self._chat():
            chat.action_export_thread()

    def action_toggle_sidebar(self) -> None:
        """Show or hide the thread list."""
        if chat := self._chat():
            chat.action_toggle_sidebar()

    async def action_switch_server(self) -> None:
        """Go back to the connect screen."""
        await self._disconnect()
        self.switch_screen(self._connect_screen(None))

    async def action_sign_out(self) -> None:
        """Forget the session's token and return to the connect screen."""
        self._token = None
        await self._disconnect()
        self.switch_screen(self._connect_screen(None))
        self.notify("Signed out.", markup=False)

    async def _disconnect(self) -> None:
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        self.refresh_css(animate=False)

    async def on_unmount(self) -> None:
        if self.client is not None:
            await self.client.aclose()
