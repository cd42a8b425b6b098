"""Running the reference Minara gateway under uvicorn (the shared runner, with this app).

The socket needs a WebSocket implementation in uvicorn: its `auto` choice is the sans-I/O one
built on `websockets` (`websockets-sansio`), which works with websockets 17 without the
deprecation warnings of uvicorn's legacy `websockets` implementation.
"""

from __future__ import annotations

from talkie_tui.devserver.common.runner import AppRunner
from talkie_tui.devserver.minara.app import create_app, stop_streams
from talkie_tui.devserver.minara.config import GatewayConfig

_RUNNER: AppRunner[GatewayConfig] = AppRunner(create_app, stop_streams)
# Run the gateway in a background thread (yields its base URL), or until Ctrl+C.
serve_in_thread = _RUNNER.serve_in_thread
run_forever = _RUNNER.run_forever
