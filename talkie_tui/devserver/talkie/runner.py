"""Running the talkie/1 reference server under uvicorn (the shared runner, with this app)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from talkie_tui.devserver.common import server
from talkie_tui.devserver.talkie.app import create_app, stop_streams
from talkie_tui.devserver.talkie.config import ServerConfig


def serve_in_thread(config: ServerConfig) -> AbstractContextManager[str]:
    """Run the server in a background thread; yields its base URL and stops it on exit."""
    return server.serve_in_thread(
        lambda: create_app(config), config.host, config.port, stop_streams=stop_streams
    )


def run_forever(config: ServerConfig, on_ready: Callable[[str], None]) -> None:
    """Serve until Ctrl+C, then return; `on_ready(url)` is called once the server accepts."""
    server.run_forever(
        lambda: create_app(config), config.host, config.port, on_ready, stop_streams=stop_streams
    )
