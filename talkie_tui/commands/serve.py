"""`talkie serve --protocol minara|cuckoo`: a reference Minara gateway or Cuckoo hub alone,
until Ctrl+C."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

from talkie_tui.core.exit_codes import ExitCode


def _serve(run_forever: Callable[..., None], config: object, ready: Callable[[str], str]) -> int:
    """Serve until Ctrl+C; once up, the URL is the one line on stdout and `ready(url)` says on
    stderr what serves there."""

    def on_ready(url: str) -> None:
        print(url, flush=True)
        print(ready(url), file=sys.stderr, flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        run_forever(config, on_ready=on_ready)
    return ExitCode.OK


def serve_minara(
    *, host: str, port: int, db: Path | None, auth_token: str | None, test_mode: bool
) -> int:
    """Run the gateway; its URL is the one line on stdout."""
    from talkie_tui.devserver.minara.config import GatewayConfig
    from talkie_tui.devserver.minara.runner import run_forever

    config = GatewayConfig(
        host=host, port=port, db_path=db, auth_token=auth_token, test_mode=test_mode
    )

    auth = "bearer token required" if auth_token else "anonymous (no token)"
    return _serve(
        run_forever,
        config,
        lambda url: f"talkie: serving a Minara gateway at {url}, {auth} (Ctrl+C to stop)",
    )


def _dev_help(url: str) -> str:
    """How to make an agent and its secret on a dev hub, with curl and a dev person."""
    from talkie_tui.devserver.cuckoo.ids import new_id

    person = new_id("usr")
    json_headers = f"-H 'X-Dev-User: {person}' -H 'Content-Type: application/json'"
    socket_url = url.replace("http://", "ws://", 1) + "/v1/agent/socket"
    return "\n".join(
        [
            f"talkie: development mode: X-Dev-User stands in for a session ({person} below)",
            "  1. make an agent (its owner's chat with it opens):",
            f"     curl -s -X POST {url}/v1/mgmt/agents {json_headers} "
            """-d '{"handle": "my-agent", "display_name": "My agent"}'""",
            "  2. give it a binding; the answer's secret (bnd_sec_…) is shown once:",
            f"     curl -s -X POST {url}/v1/mgmt/agents/AGENT_ID/binding {json_headers} "
            """-d '{"mode": "socket"}'""",
            f"  3. a backend connects to {socket_url} with 'Authorization: Bearer <secret>'",
            "  sign-in codes (POST /v1/auth/email/start) are printed to this log",
        ]
    )


def serve_cuckoo(*, host: str, port: int, db: Path | None, dev: bool) -> int:
    """Run the hub; its URL is the one line on stdout (dev mode: how to start, on stderr)."""
    import logging

    from talkie_tui.devserver.cuckoo.config import HubConfig
    from talkie_tui.devserver.cuckoo.runner import run_forever

    # Sign-in codes and delivery trouble are logged here: show them on stderr.
    hub_log = logging.getLogger("talkie_tui.devserver.cuckoo")
    if not hub_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        hub_log.addHandler(handler)
        hub_log.propagate = False
    config = HubConfig(host=host, port=port, db_path=db, dev=dev)

    mode = "development mode" if dev else "sessions and API keys only"

    def ready(url: str) -> str:
        said = f"talkie: serving a Cuckoo hub at {url}, {mode} (Ctrl+C to stop)"
        return f"{said}\n{_dev_help(url)}" if dev else said

    return _serve(run_forever, config, ready)
