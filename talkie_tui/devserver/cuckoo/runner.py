"""Running the reference Cuckoo hub under uvicorn (the shared runner, with this app).

uvicorn does the WebSocket pings (`ws_ping_interval`, `ws_ping_timeout`) and caps frames
(`ws_max_size`), so both sockets get them from `HubConfig` here. With `speedups` (the default)
it parses HTTP/1.1 with `httptools` and runs on `uvloop`, both dependencies of the project.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from talkie_tui.devserver.common.runner import AppRunner
from talkie_tui.devserver.cuckoo.app import create_app, stop_streams
from talkie_tui.devserver.cuckoo.config import HubConfig


def socket_options(config: HubConfig) -> dict[str, Any]:
    """The uvicorn settings of the hub's sockets (and, with `speedups`, its HTTP and loop)."""
    options: dict[str, Any] = {
        "ws_ping_interval": config.ping_interval,
        "ws_ping_timeout": config.pong_timeout,
        "ws_max_size": config.max_frame_bytes,
        # Frames are small JSON: compressing each costs more CPU than it saves on the wire.
        "ws_per_message_deflate": False,
        # The hub reads no client address, so uvicorn need not rewrite it from proxy headers
        # on every request.
        "proxy_headers": False,
    }
    if config.speedups:
        # uvloop has no Windows build (the dependency is not installed there).
        has_uvloop = importlib.util.find_spec("uvloop") is not None
        options.update(http="httptools", loop="uvloop" if has_uvloop else "asyncio")
    else:
        options.update(http="h11", loop="asyncio")
    return options


_RUNNER: AppRunner[HubConfig] = AppRunner(create_app, stop_streams, socket_options)
# Run the hub in a background thread (yields its base URL), or until Ctrl+C.
serve_in_thread = _RUNNER.serve_in_thread
run_forever = _RUNNER.run_forever
