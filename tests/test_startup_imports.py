"""What a start of talkie imports (issue 24): a session imports its own protocol only.

Each case runs in a fresh Python process (a test process has imported everything already) and
reports `sys.modules` once it is where a person would be: `talkie connect URL --token T` with
the chat open on each reference server, the server picker, `talkie --help` and `talkie
servers`, and once `talkie ask URL MESSAGE --token T` has printed its answer. Module sets only,
never times (those are benchmarks/startup.py's).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers import TEST_TOKEN

# The chat of `talkie connect`, through the command line's own code, up for a moment after
# its status, threads and logo are asked for.
CONNECT = """
import asyncio, json, sys
from talkie_tui.cli import build_parser, connect_app

async def main():
    app = connect_app(build_parser().parse_args(sys.argv[1:]))
    async with app.run_test(size=(120, 40)) as pilot:
        want = "ChatScreen" if len(sys.argv) > 2 else "ConnectScreen"
        for _ in range(400):
            if type(app.screen).__name__ == want and app.screen.is_mounted:
                break
            await pilot.pause(0.05)
        else:
            raise SystemExit(f"no {want}: {app.screen!r}")
        await pilot.pause(1.0)
    print(json.dumps(sorted(sys.modules)))

asyncio.run(main())
"""
# `talkie connect URL` to a known server: the modules, and whether the connect screen under it
# has its widgets, when the chat drawn first is out (before the server is asked anything).
DRAWN = """
import asyncio, json, sys
from talkie_tui.cli import build_parser, connect_app
from talkie_tui.ui.app import TalkieApp

seen = {}
reach = TalkieApp.on_joining_screen_drawn

def drawn(app):
    below = app.screen_stack[-2]
    seen["modules"] = sorted(sys.modules)
    seen["below"] = [type(below).__name__, bool(below.query("#connect-address"))]
    seen["sheets"] = sorted(path.rsplit("/", 1)[-1] for path, _ in app.stylesheet.source
                            if path.endswith(".tcss"))
    reach(app)

TalkieApp.on_joining_screen_drawn = drawn

async def main():
    app = connect_app(build_parser().parse_args(sys.argv[1:]))
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(400):
            if type(app.screen).__name__ == "ChatScreen" and app.screen.is_mounted:
                break
            await pilot.pause(0.05)
        else:
            raise SystemExit(f"no chat: {app.screen!r}")
    print(json.dumps(seen))

asyncio.run(main())
"""
# The modules imported: a None in `sys.modules` is one talkie keeps out (httpx's command line).
COMMAND = """
import contextlib, json, sys
from talkie_tui.cli import main
with contextlib.redirect_stdout(sys.stderr), contextlib.suppress(SystemExit):
    main(sys.argv[1:])
print(json.dumps(sorted(name for name, module in sys.modules.items() if module is not None)))
"""
# `talkie ask` through the command line's own code; it must have printed the answer.
ASK = """
import contextlib, io, json, sys
from talkie_tui.cli import main
answer = io.StringIO()
with contextlib.redirect_stdout(answer):
    code = main(sys.argv[1:])
if code != 0 or "hi" not in answer.getvalue():
    raise SystemExit(f"talkie ask ended {code}: {answer.getvalue()!r}")
print(json.dumps(sorted(name for name, module in sys.modules.items() if module is not None)))
"""

TALKIE_WIRE = ("ag_ui", "talkie_tui.protocol.talkie.events", "talkie_tui.protocol.talkie.client")
MINARA_WIRE = ("talkie_tui.protocol.minara", "talkie_tui.backends.minara")
CUCKOO_WIRE = ("talkie_tui.protocol.cuckoo", "talkie_tui.backends.cuckoo")
# Not before the first frame: a connection brings them, a crash or a question, or a file.
NOT_BEFORE_THE_FIRST_FRAME = (
    "talkie_tui.backends.base",
    "talkie_tui.chat",
    "talkie_tui.logs",
    "talkie_tui.ui.screens.confirm",
    "talkie_tui.ui.screens.crash",
    "talkie_tui.ui.chat.voice",
    "tomllib",  # there is no config.toml
)
NEVER_AT_START = (
    "talkie_tui.voice",
    "talkie_tui.devserver",
    "talkie_tui.conformance",
    "talkie_tui.bridge",
    "aiortc",
    "sounddevice",
    "numpy",
    "uvicorn",
)
# What `talkie ask … --token T` never needs: the TUI, httpx's own command line (it brings rich,
# pygments and click), and the sign-in kept in a token store or the settings file.
NEVER_IN_ASK = (
    "textual",
    "talkie_tui.ui",
    "rich",
    "pygments",
    "click",
    "talkie_tui.auth",
    "keyring",
    "talkie_tui.config.settings",
    "talkie_tui.config.known_servers",
)


def reported(script: str, *args: str) -> Any:
    """What `script`, run in a fresh process, printed last (as JSON)."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def imported(script: str, *args: str) -> set[str]:
    """The modules a fresh process has imported at the end of `script`."""
    return set(reported(script, *args))


def found(modules: set[str], *packages: str) -> list[str]:
    """The modules of `modules` that are `packages` or inside them."""
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


def test_a_talkie_session_imports_no_gateway_or_hub_wire(
    devserver: Callable[..., str],
) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN)
    modules = imported(CONNECT, "connect", url, "--token", TEST_TOKEN)
    assert "talkie_tui.backends.talkie.backend" in modules  # it did connect
    assert found(modules, *MINARA_WIRE, *CUCKOO_WIRE, *NEVER_AT_START) == []


def test_a_minara_session_imports_no_ag_ui_and_no_hub_wire(
    minara_gateway: Callable[..., str],
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
    modules = imported(CONNECT, "connect", url, "--token", TEST_TOKEN)
    assert "talkie_tui.backends.minara.backend" in modules
    assert found(modules, *TALKIE_WIRE, *CUCKOO_WIRE, *NEVER_AT_START) == []


async def test_a_cuckoo_session_imports_no_ag_ui_and_no_gateway_wire(
    cuckoo_hub: Callable[..., str],
) -> None:
    from talkie_tui.backends.cuckoo import sign_in

    codes: dict[str, str] = {}
    url = cuckoo_hub(code_sink=codes.__setitem__)
    await sign_in.start(url, "ada@example.com")
    person = await sign_in.verify(
        url, "ada@example.com", codes["ada@example.com"], device_name="test"
    )
    # The first time the address is found out: a Talkie manifest, then a gateway, are looked
    # for (the gateway's backend asks), but talkie/1's client is imported only for a manifest.
    first = imported(CONNECT, "connect", url, "--token", person.token)
    assert "talkie_tui.backends.cuckoo.backend" in first
    assert found(first, *TALKIE_WIRE, *NEVER_AT_START) == []
    # Known since: straight to the hub.
    again = imported(CONNECT, "connect", url, "--token", person.token)
    assert found(again, *TALKIE_WIRE, *MINARA_WIRE, *NEVER_AT_START) == []


def test_the_server_picker_imports_no_protocol_wire_and_no_keyring() -> None:
    modules = imported(CONNECT, "connect")
    assert "talkie_tui.ui.screens.connect" in modules
    wires = (*TALKIE_WIRE, *MINARA_WIRE, *CUCKOO_WIRE, "talkie_tui.auth.signin", "keyring")
    assert found(modules, *wires, *NEVER_AT_START) == []
    # Nor any wire model, nor the HTTP client: the list is drawn from the known-servers file.
    assert found(modules, "talkie_tui.protocol", "pydantic", "httpx") == []
    assert found(modules, *NOT_BEFORE_THE_FIRST_FRAME, "talkie_tui.ui.screens.joining") == []


def test_the_chat_drawn_first_comes_before_the_connection_s_code_and_the_connect_screen(
    devserver: Callable[..., str],
) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN)
    imported(CONNECT, "connect", url, "--token", TEST_TOKEN)  # now a known server
    seen = reported(DRAWN, "connect", url, "--token", TEST_TOKEN)
    # The connect screen under it is there, its widgets made after this frame.
    assert seen["below"] == ["ConnectScreen", False]
    # Only the first frame's stylesheets are parsed for it (a screen's own come with it).
    assert seen["sheets"] == ["app.tcss", "connect.tcss", "logo.tcss"]
    modules = set(seen["modules"])
    wires = (*TALKIE_WIRE, *MINARA_WIRE, *CUCKOO_WIRE, "talkie_tui.auth.signin", "keyring")
    assert found(modules, *wires, *NEVER_AT_START, *NOT_BEFORE_THE_FIRST_FRAME) == []
    assert found(modules, "talkie_tui.protocol", "pydantic", "httpx") == []


@pytest.mark.parametrize("command", [["--help"], ["servers"]], ids=["help", "servers"])
def test_help_and_servers_import_no_textual_and_no_protocol(command: list[str]) -> None:
    modules = imported(COMMAND, *command)
    assert "talkie_tui.cli" in modules
    heavy = ("textual", "talkie_tui.ui", "talkie_tui.protocol", "talkie_tui.auth.signin", "httpx")
    assert found(modules, *heavy, *TALKIE_WIRE, *NEVER_AT_START) == []


def test_ask_on_a_talkie_server_imports_no_tui_no_other_wire_and_no_token_store(
    devserver: Callable[..., str],
) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN)
    modules = imported(ASK, "ask", url, "talkie-test:echo hi", "--token", TEST_TOKEN)
    assert "talkie_tui.backends.talkie.session" in modules  # it did ask
    assert found(modules, *NEVER_IN_ASK, *MINARA_WIRE, *CUCKOO_WIRE, *NEVER_AT_START) == []


def test_ask_on_a_gateway_imports_no_ag_ui_and_no_hub_wire(
    minara_gateway: Callable[..., str],
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
    # The protocol is found out: a Talkie manifest is looked for first (no client, no AG-UI).
    modules = imported(ASK, "ask", url, "minara-test:echo hi", "--token", TEST_TOKEN)
    assert "talkie_tui.backends.minara.backend" in modules
    assert found(modules, *NEVER_IN_ASK, *TALKIE_WIRE, *CUCKOO_WIRE, *NEVER_AT_START) == []
