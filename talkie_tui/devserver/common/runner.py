"""One server's runner: its config makes its app (and uvicorn settings), the shared runner
serves it in a thread or in the foreground."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Generic, Protocol, TypeVar

from starlette.applications import Starlette

from talkie_tui.devserver.common import server
from talkie_tui.devserver.common.server import StreamStopper


class Listens(Protocol):
    """A server's config: where it listens."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...


ConfigT = TypeVar("ConfigT", bound=Listens, contravariant=True)


class AppRunner(Generic[ConfigT]):
    """Serves the app a config makes, with the server's way of ending its event streams."""

    def __init__(
        self,
        create_app: Callable[[ConfigT], Starlette],
        stop_streams: StreamStopper,
        options: Callable[[ConfigT], Mapping[str, Any] | None] = lambda _config: None,
    ) -> None:
        self._create_app = create_app
        self._stop_streams = stop_streams
        self._options = options

    def serve_in_thread(self, config: ConfigT) -> AbstractContextManager[str]:
        """Run the server in a background thread; yields its base URL and stops it on exit."""
        return server.serve_in_thread(
            lambda: self._create_app(config),
            config.host,
            config.port,
            stop_streams=self._stop_streams,
            options=self._options(config),
        )

    def run_forever(self, config: ConfigT, on_ready: Callable[[str], None]) -> None:
        """Serve until Ctrl+C, then return; `on_ready(url)` is called once the server accepts."""
        server.run_forever(
            lambda: self._create_app(config),
            config.host,
            config.port,
            on_ready,
            stop_streams=self._stop_streams,
            options=self._options(config),
        )
