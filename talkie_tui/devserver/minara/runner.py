"""Running the reference Minara gateway under uvicorn (the shared runner, with this app).

The socket needs a WebSocket implementation in uvicorn: its `auto` choice is the sans-I/O one
built on `websockets` (`websockets-sansio`), which works with websockets 17 without the
deprecation warnings of uvicorn's legacy `websockets` implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from talkie_tui.devserver.common import server
from talkie_tui.devserver.minara.app import create_app, stop_streams
from talkie_tui.devserver.minara.config import GatewayConfig


def serve_in_thread(config: GatewayConfig) -> AbstractContextManager[str]:
    """Run the gateway in a background thread; yields its base URL and stops it on exit."""
    return server.serve_in_thread(
        lambda: create_app(config), config.host, config.port, stop_streams=stop_streams
    )


def run_forever(config: GatewayConfig, on_ready: Callable[[str], None]) -> None:
    """Serve until Ctrl+C, then return; `on_ready(url)` is called once the gateway accepts."""
    server.run_forever(
        lambda: create_app(config), config.host, config.port, on_ready, stop_streams=stop_streams
    )
