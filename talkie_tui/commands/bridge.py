"""`talkie bridge cuckoo SERVER --hub URL --secret S [--allow USER]… [--webhook HOST:PORT]`:
the command around `talkie_tui.bridge.cuckoo.CuckooBridge`.

It signs in to the Talkie server the way `talkie ask` does (`--token`/$TALKIE_TOKEN, else the
sign-in `talkie login SERVER` kept), asks the hub who the agent is, says what it serves, and
runs until Ctrl+C (exit 0) or until the hub ends the agent's socket for good (4001, 4002, a
refused binding: exit 1 with the hub's words; a webhook binding refused the socket is told to
use --webhook), or the webhook's address cannot be listened on (exit 1). Status lines go to
stdout, problems to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from talkie_tui.commands.common import connect_or_report, report_error
from talkie_tui.core.errors import ForbiddenError, TalkieError, UnauthorizedError
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.bridge.greeting import Greeting

__all__ = ["bridge_cuckoo"]


def _printer(stream: TextIO) -> Callable[[str], None]:
    def write(line: str) -> None:
        # Ids and names come from the hub: whatever the bridge says is cleaned of control
        # sequences before it reaches the terminal.
        with contextlib.suppress(OSError, ValueError):
            stream.write(f"talkie bridge: {clean_text(line)}\n")
            stream.flush()

    return write


async def bridge_cuckoo(
    server: str,
    *,
    hub: str,
    secret: str,
    allow: Sequence[str] = (),
    token: str | None = None,
    state_path: Path | None = None,
    allow_private_http: bool = False,
    webhook: tuple[str, int] | None = None,
    greeting: Greeting | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the bridge; the exit code (0 after Ctrl+C, 1 on a failure, 3 sign-in needed)."""
    from talkie_tui.bridge.cuckoo import CuckooBridge
    from talkie_tui.bridge.state import BridgeState, default_state_path
    from talkie_tui.protocol.cuckoo.agent_client import LinkEnded
    from talkie_tui.protocol.cuckoo.client import hub_base

    out, err = out or sys.stdout, err or sys.stderr
    say, warn = _printer(out), _printer(err)
    try:
        hub_url = hub_base(hub, allow_private_http=allow_private_http)
    except TalkieError as error:
        warn(error.message)
        return ExitCode.USAGE
    backend = await connect_or_report(
        server, token, err, protocol="talkie", allow_private_http=allow_private_http
    )
    if isinstance(backend, ExitCode):
        return backend
    state: BridgeState | None = None
    try:
        try:
            account = await backend.account()
        except TalkieError as error:
            return report_error(error, server, err, protocol="talkie")
        bridge = CuckooBridge(
            backend=backend,
            hub_url=hub_url,
            secret=secret,
            open_state=lambda agent_id: BridgeState(state_path or default_state_path(agent_id)),
            allow=allow,
            say=say,
            warn=warn,
            webhook=webhook,
            greeting=greeting,
        )
        try:
            served = await bridge.start()
        except TalkieError as error:
            await bridge.api.aclose()
            if isinstance(error, UnauthorizedError | ForbiddenError):
                warn(_("the hub refused the binding secret: {words}").format(words=error))
            else:
                warn(_("could not ask the hub who the agent is: {words}").format(words=error))
                warn("  " + error.retry_hint)
            return ExitCode.FAILED
        state = bridge.state
        if not served.allowed:
            await bridge.api.aclose()
            warn(_("the hub did not say who owns the agent: name the people to serve with --allow"))
            return ExitCode.USAGE
        info = backend.info
        say(
            _("serving {name} ({origin}) as @{handle} ({agent}) on {hub}").format(
                name=clean_text(info.name),
                origin=info.origin,
                handle=served.handle,
                agent=served.agent_id,
                hub=hub_url.rstrip("/"),
            )
        )
        whom = ", ".join(sorted(served.allowed))
        owner = _(" (the agent's owner)") if not allow else ""
        say(
            _("answering {people}{owner} as {user} on the Talkie server; state in {path}").format(
                people=whom, owner=owner, user=clean_text(account.user.name), path=state.path
            )
        )
        # What exists by now (modules, clients: some 60,000 objects) lives as long as the
        # bridge. Frozen out of the collector's sight, a full collection walks only what the
        # replies made, instead of stopping the event loop for 12-50 ms (measured here) in
        # the middle of somebody's reply.
        gc.freeze()
        try:
            await bridge.run()
        except LinkEnded as ended:
            warn(ended.message)
            if ended.code == "binding_not_socket":
                warn(
                    "  "
                    + _(
                        "the agent's binding is in webhook mode: start the bridge with "
                        "--webhook HOST:PORT, the address its webhook URL reaches"
                    )
                )
            return ExitCode.FAILED
        except OSError as error:
            if webhook is None:
                raise
            host, port = webhook  # its listening socket: the address taken, or not this host's
            warn(
                _("could not listen on {host}:{port} for the hub's webhook posts: {words}").format(
                    host=host, port=port, words=clean_text(str(error))
                )
            )
            return ExitCode.FAILED
        except asyncio.CancelledError:
            say(_("stopped."))
            return ExitCode.OK
        return ExitCode.OK
    finally:
        with contextlib.suppress(Exception):
            await backend.aclose()
        if state is not None:
            state.close()


def run_bridge_cuckoo(server: str, **options: Any) -> int:
    """`bridge_cuckoo` under asyncio.run; Ctrl+C is a clean stop (exit 0)."""
    try:
        return asyncio.run(bridge_cuckoo(server, **options))
    except KeyboardInterrupt:
        return ExitCode.OK
