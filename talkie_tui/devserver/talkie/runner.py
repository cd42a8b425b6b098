"""Running the talkie/1 reference server under uvicorn (the shared runner, with this app)."""

from __future__ import annotations

from talkie_tui.devserver.common.runner import AppRunner
from talkie_tui.devserver.talkie.app import create_app, stop_streams
from talkie_tui.devserver.talkie.config import ServerConfig

_RUNNER: AppRunner[ServerConfig] = AppRunner(create_app, stop_streams)
# Run the server in a background thread (yields its base URL), or until Ctrl+C.
serve_in_thread = _RUNNER.serve_in_thread
run_forever = _RUNNER.run_forever
