"""`talkie serve --protocol minara`: the reference Minara gateway alone, until Ctrl+C."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from talkie_tui.core.exit_codes import ExitCode


def serve_minara(
    *, host: str, port: int, db: Path | None, auth_token: str | None, test_mode: bool
) -> int:
    """Run the gateway; its URL is the one line on stdout."""
    from talkie_tui.devserver.minara.config import GatewayConfig
    from talkie_tui.devserver.minara.runner import run_forever

    config = GatewayConfig(
        host=host, port=port, db_path=db, auth_token=auth_token, test_mode=test_mode
    )

    def ready(url: str) -> None:
        print(url, flush=True)
        auth = "bearer token required" if auth_token else "anonymous (no token)"
        print(
            f"talkie: serving a Minara gateway at {url}, {auth} (Ctrl+C to stop)",
            file=sys.stderr,
            flush=True,
        )

    with contextlib.suppress(KeyboardInterrupt):
        run_forever(config, on_ready=ready)
    return ExitCode.OK
