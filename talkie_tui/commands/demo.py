"""`talkie demo`: the reference server on a free 127.0.0.1 port, and a conversation with it."""

from __future__ import annotations

import asyncio
import secrets
import sys
import tempfile
import time
from pathlib import Path

from talkie_tui.core.exit_codes import ExitCode

from .ask import ask

__all__ = ["run_demo"]

DEMO_SCRIPT = (
    "help",
    "Show me the contact Alfa",
    "talkie-test:card",
    "talkie-test:action",
)


def run_demo(*, script: tuple[str, ...] = DEMO_SCRIPT, stay: bool = True) -> int:
    """Start the demo server and open the TUI on it (a scripted conversation without a TTY)."""
    from talkie_tui.devserver.talkie.config import ServerConfig
    from talkie_tui.devserver.talkie.runner import serve_in_thread

    token = secrets.token_urlsafe(16)
    with tempfile.TemporaryDirectory(prefix="talkie-demo-") as folder:
        # The fake voice provider (on 127.0.0.1) lets voice be tried without any account.
        config = ServerConfig(
            test_mode=True, dev_token=token, db_path=Path(folder) / "demo.db", fake_voice=True
        )
        with serve_in_thread(config) as url:
            if sys.stdin.isatty() and sys.stdout.isatty():
                from talkie_tui.config import KnownServers
                from talkie_tui.ui.app import TalkieApp

                # The demo server lives for this run only: keep it out of the known servers.
                # `demo=True` is the development switch: its voice provider speaks plain http
                # on 127.0.0.1, which a real server's provider may never do.
                known = KnownServers(Path(folder) / "servers.json")
                app = TalkieApp(url, token=token, known=known, demo=True)
                app.run()
                return app.return_code or ExitCode.OK
            print(f"Reference server: {url}  (development token: {token})\n", flush=True)
            thread = None
            bold, plain = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("", "")
            for message in script:
                print(f"{bold}> {message}{plain}", flush=True)
                code = asyncio.run(ask(url, message, token=token, thread=thread))
                thread = thread or _latest_thread(url, token)
                print(flush=True)
                if code != ExitCode.OK:
                    return code
            if not stay:
                return ExitCode.OK
            print(
                "The server keeps running. In another terminal, try:\n"
                f"  talkie ask {url} 'help' --token {token}\n"
                "Press Ctrl+C to stop.",
                flush=True,
            )
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                print("\nStopped.", file=sys.stderr)
    return ExitCode.OK


def _latest_thread(url: str, token: str) -> str | None:
    from talkie_tui.core.tokens import StaticToken
    from talkie_tui.protocol.client import TalkieClient

    async def latest() -> str | None:
        async with await TalkieClient.connect(url, tokens=StaticToken(token)) as client:
            threads = await client.threads()
        return threads[0].id if threads else None

    return asyncio.run(latest())
