"""The argument parser of every `talkie` subcommand (the command line is a contract).

The groups that serve or check other programs have their parsers beside the code that runs
them: `serving` (demo, serve) and `bridging` (bridge); the conformance command's is here."""

from __future__ import annotations

import argparse
from typing import Any

from talkie_tui import __version__
from talkie_tui.commands.arguments import CONFORMANCE_PROTOCOLS, add_client_protocol, add_server
from talkie_tui.commands.bridging import add_bridge
from talkie_tui.commands.serving import add_serving

_EPILOG = """\
SERVER is a host[:port] (https is assumed, http for localhost), an origin URL such as
https://crm.example.com, or the full URL of a manifest. The development token may also come
from the TALKIE_TOKEN environment variable.

examples:
  talkie demo
  talkie login crm.example.com
  talkie ask crm.example.com "What meetings do I have today?"
  talkie serve --test-mode --port 8765 --dev-token secret
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (a contract: docs/ARCHITECTURE.md)."""
    parser = argparse.ArgumentParser(
        prog="talkie",
        description="The terminal client for Talkie Protocol 1 agent servers.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"talkie {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="write a debug log (secrets redacted) to the state folder; its path is printed",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    connect = commands.add_parser("connect", help="open the chat TUI on a server")
    add_server(connect, optional=True)
    connect.add_argument("--thread", metavar="ID", help="open this thread")
    connect.add_argument(
        "--pair", metavar="CODE", help="join a hub agent by the pairing code its owner gave"
    )
    add_client_protocol(connect)

    add_serving(commands)

    ask = commands.add_parser(
        "ask",
        help="send one message and print the answer",
        description="Exit codes: 0 finished, 1 failed, 2 bad usage, 3 sign-in needed.",
    )
    add_server(ask)
    ask.add_argument("message", metavar="MESSAGE")
    ask.add_argument("--thread", metavar="ID", help="continue this thread")
    ask.add_argument("--json", action="store_true", help="print every event as a JSON line")
    add_client_protocol(ask)

    login = commands.add_parser(
        "login",
        help="sign in to a server in the browser (OAuth); works over SSH too",
        description="Opens the server's sign-in page (or prints its address) and keeps the "
        "sign-in in the system keyring. Over SSH, open the address on any computer and paste "
        "the address the browser ends on. A Minara gateway asks for its token, a Cuckoo hub "
        "for your e-mail address and the code it sends. Exit codes: 0 signed in, 1 failed, "
        "3 not signed in.",
    )
    add_server(login, token=False)
    add_client_protocol(login)
    login.add_argument(
        "--no-browser",
        action="store_true",
        help="do not open a browser: print the address and read the final address from stdin",
    )
    login.add_argument(
        "--store",
        choices=["keyring", "file", "session"],
        help="where to keep the sign-in this time (default: the token_storage setting)",
    )
    logout = commands.add_parser(
        "logout",
        help="sign out of a server: revoke the sign-in (a hub ends the session), then forget it",
    )
    add_server(logout, token=False)
    commands.add_parser("servers", help="list known servers and whether you are signed in")

    threads = commands.add_parser("threads", help="list the threads on a server")
    add_server(threads)
    add_client_protocol(threads)

    add_conformance(commands)

    commands.add_parser(
        "doctor",
        help="check this machine: settings, keyring, browser, audio, proxies, known servers",
        description="A report in plain words; always exits 0.",
    )
    commands.add_parser(
        "devices",
        help="list the audio input and output devices for voice calls",
        description="Exit codes: 0 listed, 1 audio unavailable (no PortAudio, or no devices).",
    )
    add_bridge(commands)
    return parser


def add_conformance(commands: Any) -> None:
    """`talkie conformance SERVER …` and `talkie conformance agent [--webhook] -- COMMAND…`."""
    conformance = commands.add_parser(
        "conformance",
        help="check a server (Talkie, Minara gateway, Cuckoo hub) or a Cuckoo agent against "
        "its protocol",
        description="Runs the checks of the server's protocol (found out as `talkie connect` "
        "does; --protocol forces it): one line per check, PASS, FAIL or SKIP with the reason, "
        "then `N passed, M failed, K skipped`. `talkie conformance agent [--webhook] -- COMMAND "
        "ARGS…` runs a Cuckoo agent backend against a hub of its own (CUCKOO_HUB and "
        "CUCKOO_SECRET in its environment) and checks it as a person would. Exit 0 when no "
        "check failed, 1 when one did, 2 on bad usage.",
    )
    add_server(
        conformance,
        optional=True,
        server_help="host[:port], origin URL or manifest URL; `agent` to check an agent backend",
    )
    conformance.add_argument(
        "--protocol",
        choices=CONFORMANCE_PROTOCOLS,
        default=None,
        help="the protocol whose checks run (default: found out from the server)",
    )
    conformance.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per check (id, title, section, outcome, detail, duration)",
    )
    conformance.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    conformance.add_argument(
        "--only",
        metavar="ID",
        action="append",
        default=[],
        help="run only these checks (repeat it, or separate ids by commas)",
    )
    conformance.add_argument(
        "--skip", metavar="ID", action="append", default=[], help="do not run these checks"
    )
    conformance.add_argument(
        "--list", action="store_true", help="list the checks (id, spec section, title) and exit"
    )
    conformance.add_argument(
        "--quick", action="store_true", help="skip the checks that take long (marked slow)"
    )
    conformance.add_argument(
        "--webhook",
        action="store_true",
        help="agent mode: the agent's binding posts to a webhook the agent serves",
    )
