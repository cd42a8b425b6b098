"""`talkie demo`: the reference server on a free 127.0.0.1 port, and a conversation with it."""

from __future__ import annotations

import asyncio
import secrets
import sys
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from talkie_tui.commands.ask import ask
from talkie_tui.commands.common import keep_serving
from talkie_tui.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from talkie_tui.backends.base import ProtocolName

__all__ = ["DEMO_SCRIPTS", "run_demo"]

DEMO_SCRIPTS: dict[ProtocolName, tuple[str, ...]] = {
    "talkie": ("help", "Show me the contact Alfa", "talkie-test:card", "talkie-test:action"),
    "minara": ("help", "portfolio", "market summary", "plan my week"),
    "cuckoo": ("show me Alfa", "send the offer to Alfa"),
}
"""What the demo says to its server when there is no terminal to open the TUI in."""


def run_demo(
    *, protocol: ProtocolName = "talkie", script: tuple[str, ...] | None = None, stay: bool = True
) -> int:
    """Start the demo server of `protocol` and open the TUI on it (a scripted conversation
    without a TTY). A Cuckoo hub's demo adds the Talkie server and the bridge (`demo_cuckoo`)."""
    if protocol == "cuckoo":
        from talkie_tui.commands.demo_cuckoo import run_cuckoo_demo

        return run_cuckoo_demo(script=script or DEMO_SCRIPTS["cuckoo"], stay=stay)
    token = secrets.token_urlsafe(16)
    with (
        tempfile.TemporaryDirectory(prefix="talkie-demo-") as folder,
        _serve(protocol, token, Path(folder)) as url,
    ):
        if sys.stdin.isatty() and sys.stdout.isatty():
            from talkie_tui.config import KnownServers
            from talkie_tui.ui.app import TalkieApp

            # The demo server lives for this run only: keep it out of the known servers.
            # `demo=True` is the development switch: its voice provider speaks plain http
            # on 127.0.0.1, which a real server's provider may never do.
            known = KnownServers(Path(folder) / "servers.json")
            # Its drafts too: what is typed to a throwaway server stays with it.
            app = TalkieApp(
                url,
                token=token,
                gateway_token=token,
                known=known,
                protocol=protocol,
                demo=True,
                drafts_file=Path(folder) / "drafts.json",
            )
            app.run()
            return app.return_code or ExitCode.OK
        print(f"Reference server: {url}  (token: {token})\n", flush=True)
        thread = None
        bold, plain = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("", "")
        for message in script or DEMO_SCRIPTS[protocol]:
            print(f"{bold}> {message}{plain}", flush=True)
            code = asyncio.run(ask(url, message, token=token, thread=thread, protocol=protocol))
            thread = thread or asyncio.run(_latest_thread(url, token, protocol))
            print(flush=True)
            if code != ExitCode.OK:
                return code
        if not stay:
            return ExitCode.OK
        keep_serving(
            "The server keeps running. In another terminal, try:\n"
            f"  talkie ask {url} 'help' --token {token}"
        )
    return ExitCode.OK


def _serve(protocol: ProtocolName, token: str, folder: Path) -> AbstractContextManager[str]:
    """The demo server of `protocol` in a background thread, with its data in `folder`."""
    if protocol == "minara":
        from talkie_tui.devserver.minara import runner as gateway
        from talkie_tui.devserver.minara.config import GatewayConfig

        return gateway.serve_in_thread(
            GatewayConfig(auth_token=token, db_path=folder / "demo.db", test_mode=True)
        )
    from talkie_tui.devserver.talkie.config import ServerConfig
    from talkie_tui.devserver.talkie.runner import serve_in_thread

    # The fake voice provider (on 127.0.0.1) lets voice be tried without any account.
    config = ServerConfig(
        test_mode=True, dev_token=token, db_path=folder / "demo.db", fake_voice=True
    )
    return serve_in_thread(config)


async def _latest_thread(url: str, token: str, protocol: ProtocolName) -> str | None:
    """The newest thread of the demo server: where the script goes on."""
    from talkie_tui import backends
    from talkie_tui.core.tokens import StaticToken

    backend = await backends.connect(url, protocol=protocol, tokens=StaticToken(token))
    try:
        threads = await backend.threads()
    finally:
        await backend.aclose()
    return threads[0].id if threads else None
