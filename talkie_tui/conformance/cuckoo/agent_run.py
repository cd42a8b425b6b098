"""`talkie conformance agent [--webhook] -- COMMAND ARGS…`: check a Cuckoo agent backend as a
person would, against a reference hub of talkie's own.

The hub runs in a temporary folder; an agent, its binding and a conversation are made; COMMAND
runs with `CUCKOO_HUB` (the relay in front of the hub) and `CUCKOO_SECRET` in its environment,
the convention of the hub's SDK examples. Each check says why it matters to a person.
"""

from __future__ import annotations

import random
import socket
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from talkie_tui.conformance.cuckoo.agent_harness import AgentProcess, AgentRelay, ReferenceHub
from talkie_tui.conformance.cuckoo.agent_mode import AGENT_CHECKS
from talkie_tui.conformance.cuckoo.agent_session import AgentSession
from talkie_tui.conformance.cuckoo.hub import Hub, Party, make_throwaway
from talkie_tui.conformance.cuckoo.webhook_checks import WEBHOOK_CHECKS
from talkie_tui.conformance.local_server import serve_local
from talkie_tui.conformance.output import Reporter
from talkie_tui.conformance.suite import Check, Started, Suite, Target
from talkie_tui.protocol.net.http import make_http_client

if TYPE_CHECKING:
    from talkie_tui.conformance.runner import Selection

__all__ = ["agent_checks", "agent_suite", "run_agent_conformance"]


def agent_checks(webhook: bool) -> list[Check[AgentSession]]:
    """The checks of an agent on a socket binding, or (`webhook`) on a webhook binding."""
    return WEBHOOK_CHECKS if webhook else AGENT_CHECKS


# Below Linux's ephemeral range (32768-60999), where port-0 listeners and outgoing connections
# take theirs: a port found free here stays free until the agent binds it.
AGENT_PORTS = range(20000, 32768)


def _free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on, for the agent's webhook."""
    for port in random.sample(AGENT_PORTS, 50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        found: int = probe.getsockname()[1]
        return found


@asynccontextmanager
async def _hub_for_agent(folder: Path, hub: str | None) -> AsyncIterator[str]:
    """The given development hub, or a reference hub of talkie's own in `folder`."""
    if hub is not None:
        yield hub
        return
    reference = ReferenceHub(folder)
    try:
        yield await reference.start()
    finally:
        await reference.stop()


def agent_suite(
    command: list[str], *, webhook: bool = False, hub: str | None = None
) -> Suite[AgentSession]:
    """The agent checks, started by running `command` against a hub of talkie's own (or the
    development hub at `hub`: each run makes an agent, binding and people of its own).

    With `webhook` the binding posts to `http://127.0.0.1:$PORT/webhook`: the agent gets `PORT`
    and `CUCKOO_WEBHOOK_URL` in its environment beside `CUCKOO_HUB` and `CUCKOO_SECRET`.
    """

    @asynccontextmanager
    async def start(target: Target) -> AsyncIterator[Started[AgentSession]]:
        del target
        with tempfile.TemporaryDirectory(prefix="talkie-conformance-") as folder:
            process = AgentProcess(command, Path(folder) / "agent.log")
            environment: dict[str, str] = {}
            webhook_url = ""
            if webhook:
                port = _free_port()
                webhook_url = f"http://127.0.0.1:{port}/webhook"
                environment |= {"PORT": str(port), "CUCKOO_WEBHOOK_URL": webhook_url}
            async with _hub_for_agent(Path(folder), hub) as base:
                relay = AgentRelay(base)
                try:
                    async with serve_local(relay.app()) as url, make_http_client() as http:
                        hub_api = Hub(base, http)
                        owner, person = Party.person(None), Party.person(None)
                        mode = "webhook" if webhook else "socket"
                        chat = await make_throwaway(
                            hub_api, owner, person, mode=mode, webhook_url=webhook_url or None
                        )
                        environment |= {"CUCKOO_HUB": url, "CUCKOO_SECRET": chat.secret}
                        await process.start(environment)
                        session = AgentSession(
                            hub_api, relay, process, chat, webhook_url=webhook_url
                        )
                        yield Started(session, "agent " + " ".join(command))
                        await process.stop()  # before the relay goes: the agent sees no outage
                finally:
                    await process.stop()

    return Suite("cuckoo agent", agent_checks(webhook), start)


async def run_agent_conformance(
    command: list[str],
    *,
    webhook: bool = False,
    selection: Selection | None = None,
    as_json: bool = False,
    junit: Path | None = None,
    reporter: Reporter | None = None,
    hub: str | None = None,
) -> int:
    """Run the agent checks on `command`; the exit status (0 when none failed)."""
    from talkie_tui.conformance.runner import run_suite

    suite = agent_suite(command, webhook=webhook, hub=hub)
    reporter = reporter or Reporter(suite.protocol, as_json=as_json, junit=junit)
    return await run_suite(suite, Target("agent"), reporter, selection=selection)
