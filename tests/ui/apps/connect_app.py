"""A harness app that shows the connect screen and records the clients it hands over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.app import App
from textual.widgets import Input

import talkie_tui.ui
from talkie_tui.config import KnownServers
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.ui.screens.connect import ConnectScreen

STYLES = Path(talkie_tui.ui.__file__).parent / "styles"


def stylesheets(*names: str) -> list[Path]:
    """Paths of the named .tcss files of the UI."""
    return [STYLES / f"{name}.tcss" for name in names]


def steady_cursor(app: App[Any]) -> None:
    """Stop every Input's cursor from blinking, so snapshots do not depend on timing."""
    for field in app.screen.query(Input):
        field.cursor_blink = False


class ConnectApp(App[None]):
    """Pushes a ConnectScreen built from the given arguments; keeps every `Connected` client."""

    CSS_PATH = stylesheets("connect", "confirm")  # type: ignore[assignment]

    def __init__(
        self,
        address: str | None = None,
        *,
        known: KnownServers,
        token: str | None = None,
        allow_private_http: bool = False,
        **options: Any,
    ) -> None:
        super().__init__()
        self.connected: list[TalkieClient] = []
        self._screen_args = dict(
            address=address,
            token=token,
            known=known,
            allow_private_http=allow_private_http,
            **options,
        )

    def on_mount(self) -> None:
        self.push_screen(ConnectScreen(**self._screen_args))

    @property
    def connect_screen(self) -> ConnectScreen:
        """The connect screen (the bottom one if a dialog is open)."""
        return next(s for s in self.screen_stack if isinstance(s, ConnectScreen))

    @on(ConnectScreen.Connected)
    def _connected(self, event: ConnectScreen.Connected) -> None:
        self.connected.append(event.client)

    async def on_unmount(self) -> None:
        for client in self.connected:
            await client.aclose()
