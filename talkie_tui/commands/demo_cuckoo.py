"""`talkie demo --protocol cuckoo`: the demo CRM agent of the reference Talkie server, reached
through a Cuckoo hub by `talkie bridge cuckoo`, and the TUI signed in to the hub.

Everything runs in this process on 127.0.0.1, with its data in a folder of this run:

1. the reference Talkie server (test mode, the demo agent, a development token of this run);
2. the reference hub in development mode, its sign-in codes handed to this process (a code sink:
   nothing is mailed, nothing is read from a log);
3. the demo person signs in to the hub with the e-mail code flow the app uses (`sign_in.start`,
   the code from the sink, `sign_in.verify`) — the real path, not the development header, so
   the TUI runs on an ordinary session token — and is named "Jana Nováková" (`PATCH /me`);
4. as that person (the development header, for management only), the agent "Talkie Demo CRM"
   with a socket binding, running schedules (the bridge confirms and runs them); its owner's
   conversation with it opens on the hub;
5. the bridge, in a thread with its own event loop, serves that binding from the Talkie server
   (signed in with the development token) and answers the demo person only;
6. the TUI on the hub with the person's session token, chatting with the agent: a card comes as
   a message, an action as a message with Confirm/Cancel buttons whose tap decides it on the
   Talkie server. Without a terminal: a short scripted conversation (`talkie ask`).

On quit the bridge stops first (its socket closed), then the hub, then the Talkie server.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from talkie_tui.bridge.greeting import Greeting
from talkie_tui.commands.common import keep_serving
from talkie_tui.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from talkie_tui.bridge.cuckoo import CuckooBridge

__all__ = [
    "AGENT_HANDLE",
    "AGENT_NAME",
    "DEMO_EMAIL",
    "DEMO_NAME",
    "DEMO_SCRIPT",
    "CuckooDemo",
    "cuckoo_demo",
    "run_cuckoo_demo",
]

logger = logging.getLogger(__name__)

DEMO_EMAIL = "jana@demo.talkie.example"
DEMO_NAME = "Jana Nováková"
AGENT_HANDLE = "demo-crm"
AGENT_NAME = "Talkie Demo CRM"
DEMO_SCRIPT = ("show me Alfa", "send the offer to Alfa")
"""What the demo says to the agent when there is no terminal to open the TUI in."""
READY_SECONDS = 20.0


@dataclass
class CuckooDemo:
    """What the running demo is made of."""

    talkie_url: str
    talkie_token: str = field(repr=False)
    hub_url: str
    session_token: str = field(repr=False)  # the demo person's, on the hub
    user_id: str
    agent_id: str
    conversation_id: str  # the person's conversation with the agent


DEMO_GREETING = Greeting(
    "Hi, I am the Example CRM's assistant. Ask me about your meetings, contacts and offers, "
    "or tap one of these to begin.",
    ("What meetings do I have today?", "Find the contact Petr Novák", "Delete contact Tomáš"),
)
"""The demo agent's first message: its quick replies are the hub's, and every kind of part the
demo shows (buttons come with actions, cards as messages, quick replies here)."""


class _Codes:
    """The hub's sign-in codes, as it hands them to this process."""

    def __init__(self) -> None:
        self._codes: dict[str, str] = {}
        self._lock = threading.Lock()

    def __call__(self, email: str, code: str) -> None:
        with self._lock:
            self._codes[email] = code

    def of(self, email: str) -> str:
        with self._lock:
            return self._codes[email]


async def _set_up(hub_url: str, codes: _Codes) -> tuple[str, str, str, str, str]:
    """The demo person signed in, renamed, and owning the agent with a socket binding: the
    session token, the person's id, the agent's id, its binding secret, the conversation."""
    import httpx

    from talkie_tui.backends.cuckoo import sign_in

    await sign_in.start(hub_url, DEMO_EMAIL, allow_private_http=True)
    signed = await sign_in.verify(
        hub_url, DEMO_EMAIL, codes.of(DEMO_EMAIL), device_name="talkie demo"
    )
    async with httpx.AsyncClient(base_url=hub_url, timeout=10.0, trust_env=False) as http:
        renamed = await http.patch(
            "/v1/client/me",
            json={"display_name": DEMO_NAME},
            headers={"Authorization": f"Bearer {signed.token}"},
        )
        renamed.raise_for_status()
        as_owner = {"X-Dev-User": signed.user_id}
        made = await http.post(
            "/v1/mgmt/agents",
            json={
                "handle": AGENT_HANDLE,
                "display_name": AGENT_NAME,
                "supports_schedules": True,  # the bridge runs them (`bridge.schedules`)
            },
            headers=as_owner,
        )
        made.raise_for_status()
        agent_id = str(made.json()["agent"]["id"])
        bound = await http.post(
            f"/v1/mgmt/agents/{agent_id}/binding", json={"mode": "socket"}, headers=as_owner
        )
        bound.raise_for_status()
        secret = str(bound.json()["secret"])
        listed = await http.get(
            "/v1/client/conversations", headers={"Authorization": f"Bearer {signed.token}"}
        )
        listed.raise_for_status()
    conversation = next(
        str(c["id"])
        for c in listed.json()["conversations"]
        if any(p.get("id") == agent_id for p in c.get("participants", []))
    )
    return signed.token, signed.user_id, agent_id, secret, conversation


class _BridgeThread:
    """`talkie bridge cuckoo` in a thread with its own event loop (the TUI has the main one)."""

    def __init__(
        self, talkie_url: str, token: str, hub_url: str, secret: str, allow: str, state: Path
    ) -> None:
        self._args = (talkie_url, token, hub_url, secret, allow, state)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = threading.Event()
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="talkie-demo-bridge", daemon=True)

    def start(self) -> None:
        """Start it, and wait until it is connected to the hub (RuntimeError when it is not)."""
        self._thread.start()
        if not self._ready.wait(READY_SECONDS) or self.failure is not None:
            self.stop()
            raise RuntimeError(f"the demo's bridge did not start: {self.failure!r}")

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # said by start(), or logged after it
            self.failure = error
            logger.warning("demo bridge ended: %r", error)
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        from talkie_tui import backends
        from talkie_tui.bridge.cuckoo import CuckooBridge
        from talkie_tui.bridge.state import BridgeState
        from talkie_tui.core.tokens import StaticToken

        talkie_url, token, hub_url, secret, allow, state_path = self._args
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        backend = await backends.connect(talkie_url, protocol="talkie", tokens=StaticToken(token))
        states: list[BridgeState] = []

        def open_state(agent_id: str) -> BridgeState:
            states.append(BridgeState(state_path))
            return states[-1]

        bridge: CuckooBridge = CuckooBridge(
            backend=backend,
            hub_url=hub_url + "/",
            secret=secret,
            open_state=open_state,
            allow=(allow,),
            say=lambda line: logger.info("bridge: %s", line),
            warn=lambda line: logger.warning("bridge: %s", line),
            greeting=DEMO_GREETING,
        )
        watch = asyncio.ensure_future(self._when_ready(bridge))
        try:
            await bridge.run()
        except asyncio.CancelledError:
            pass
        finally:
            watch.cancel()
            with contextlib.suppress(Exception):
                await backend.aclose()
            for state in states:
                state.close()

    async def _when_ready(self, bridge: CuckooBridge) -> None:
        await bridge.ready.wait()
        self._ready.set()

    def stop(self) -> None:
        """Stop serving (the socket closes) and wait for the thread."""
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended meanwhile
                loop.call_soon_threadsafe(task.cancel)
        self._thread.join(10)


async def _say(demo: CuckooDemo, text: str, quiet: float = 1.0) -> list[str]:
    """Send `text` as the demo person and wait for the agent's answer, which may be several
    messages (a card, the streamed text, an action with buttons): until every message after it
    is complete and nothing new came for `quiet` seconds. Each message as lines of text."""
    import httpx

    path = f"/v1/client/conversations/{demo.conversation_id}/messages"
    headers = {"Authorization": f"Bearer {demo.session_token}"}
    async with httpx.AsyncClient(
        base_url=demo.hub_url, headers=headers, timeout=10.0, trust_env=False
    ) as http:
        sent = await http.post(path, json={"text": text})
        sent.raise_for_status()
        mine = str(sent.json()["message"]["id"])
        deadline = time.monotonic() + 60
        seen: list[dict[str, Any]] = []
        settled_at = time.monotonic()
        while time.monotonic() < deadline:
            page = await http.get(path, params={"after": mine, "limit": 100})
            page.raise_for_status()
            found = [m for m in page.json()["messages"] if m["sender"]["kind"] == "agent"]
            done = bool(found) and all(m.get("status") == "complete" for m in found)
            if found != seen:
                seen, settled_at = found, time.monotonic()
            elif done and time.monotonic() - settled_at >= quiet:
                break
            await asyncio.sleep(0.1)
    found = sorted(seen, key=lambda m: str(m["id"]))
    return [_shown(m) for m in found]


def _shown(message: dict[str, Any]) -> str:
    """A message as the scripted demo prints it: its text, then its buttons on a line."""
    from talkie_tui.core.sanitize import clean_text

    body = message.get("body") or {}
    lines = [clean_text(str(body.get("text") or ""))]
    rows = body.get("buttons") or []
    labels = [clean_text(str(b.get("label") or "")) for row in rows for b in row]
    if labels:
        lines.append("[" + "] [".join(labels) + "]")
    return "\n".join(line for line in lines if line)


@contextlib.contextmanager
def cuckoo_demo(folder: Path, *, undo_seconds: float | None = None) -> Iterator[CuckooDemo]:
    """The Talkie server, the hub, the demo person and agent, and the bridge, all running;
    everything stops on exit (the bridge first). Their log lines stay off the terminal.
    `undo_seconds`: the Talkie server's undo window (its default when None)."""
    with _logs_off_the_terminal():
        yield from _run_demo(folder, undo_seconds)


QUIET_LOGGERS = ("talkie_tui.devserver", __name__)
"""The demo's servers and its bridge thread: their log lines (the hub's sign-in code among
them) go to the debug log when there is one, never to the terminal under the TUI."""


@contextlib.contextmanager
def _logs_off_the_terminal() -> Iterator[None]:
    """While inside, a record of `QUIET_LOGGERS` that no handler takes is dropped, rather than
    written to stderr by logging's last resort (it stayed on the terminal after the TUI quit);
    handlers above (the debug log, a test's capture) still get it."""
    quiet = logging.NullHandler()
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    for each in loggers:
        each.addHandler(quiet)
    try:
        yield
    finally:
        for each in loggers:
            each.removeHandler(quiet)


def _run_demo(folder: Path, undo_seconds: float | None = None) -> Iterator[CuckooDemo]:
    from talkie_tui.devserver.cuckoo.config import HubConfig
    from talkie_tui.devserver.cuckoo.runner import serve_in_thread as serve_hub
    from talkie_tui.devserver.talkie.config import ServerConfig
    from talkie_tui.devserver.talkie.runner import serve_in_thread as serve_talkie

    token = secrets.token_urlsafe(16)
    codes = _Codes()
    talkie_config = ServerConfig(test_mode=True, dev_token=token, db_path=folder / "demo.db")
    if undo_seconds is not None:
        talkie_config = dataclasses.replace(talkie_config, undo_seconds=undo_seconds)
    hub_config = HubConfig(dev=True, db_path=folder / "hub.sqlite3", code_sink=codes)
    with serve_talkie(talkie_config) as talkie_url, serve_hub(hub_config) as hub_url:
        session, user_id, agent_id, secret, conversation = asyncio.run(_set_up(hub_url, codes))
        bridge = _BridgeThread(
            talkie_url, token, hub_url, secret, user_id, folder / "bridge.sqlite3"
        )
        bridge.start()
        try:
            yield CuckooDemo(talkie_url, token, hub_url, session, user_id, agent_id, conversation)
        finally:
            bridge.stop()


def run_cuckoo_demo(*, script: tuple[str, ...] | None = None, stay: bool = True) -> int:
    """The demo on a hub: the TUI at a terminal, else a scripted conversation."""
    with (
        tempfile.TemporaryDirectory(prefix="talkie-demo-") as folder,
        cuckoo_demo(Path(folder)) as demo,
    ):
        if sys.stdin.isatty() and sys.stdout.isatty():
            from talkie_tui.config import KnownServers
            from talkie_tui.ui.app import TalkieApp

            # The demo's servers live for this run only: keep them out of the known servers.
            known = KnownServers(Path(folder) / "servers.json")
            app = TalkieApp(
                demo.hub_url,
                hub_token=demo.session_token,
                known=known,
                protocol="cuckoo",
                demo=True,
                drafts_file=Path(folder) / "drafts.json",  # its drafts stay with it
            )
            app.run()
            return app.return_code or ExitCode.OK
        return _scripted(demo, script or DEMO_SCRIPT, stay)


def _scripted(demo: CuckooDemo, script: tuple[str, ...], stay: bool) -> int:
    print(
        f"Cuckoo hub: {demo.hub_url}  (signed in as {DEMO_NAME})\n"
        f"Reference Talkie server: {demo.talkie_url}, its agent bridged as {AGENT_NAME}\n",
        flush=True,
    )
    bold, plain = ("\033[1m", "\033[0m") if sys.stdout.isatty() else ("", "")
    for message in script:
        print(f"{bold}> {message}{plain}", flush=True)
        try:
            replies = asyncio.run(_say(demo, message))
        except Exception as error:  # the hub or the bridge failed: say so, exit 1
            print(f"talkie: the demo's hub did not answer: {error}", file=sys.stderr)
            return ExitCode.FAILED
        for reply in replies:
            print(reply, flush=True)
        print(flush=True)
    if not stay:
        return ExitCode.OK
    keep_serving(
        "The hub, the bridge and the server keep running. In another terminal, try:\n"
        f"  talkie ask {demo.hub_url} 'show me Alfa' --token {demo.session_token}"
    )
    return ExitCode.OK
