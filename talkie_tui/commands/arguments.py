"""The arguments several `talkie` subcommands share: a server, its token, its protocol."""

from __future__ import annotations

import argparse

from talkie_tui.backends import PROTOCOLS as CLIENT_PROTOCOLS


def add_server(
    parser: argparse.ArgumentParser,
    *,
    token: bool = True,
    optional: bool = False,
    server_help: str | None = None,
) -> None:
    """The SERVER argument, `--token` (unless `token` is false) and `--allow-private-http`."""
    parser.add_argument(
        "server",
        metavar="SERVER",
        nargs="?" if optional else None,
        help=server_help
        or "host[:port], origin URL or manifest URL" + (" (omit to choose)" if optional else ""),
    )
    if token:
        parser.add_argument(
            "--token", metavar="T", help="development token (§2.2); default $TALKIE_TOKEN"
        )
    parser.add_argument(
        "--allow-private-http",
        action="store_true",
        help="development switch: accept plain http on private LAN addresses",
    )


# The reference servers `serve` can start; `demo` opens the TUI on each (a hub's demo adds the
# Talkie server and the bridge).
SERVER_PROTOCOLS = ("talkie", "minara", "cuckoo")
CONFORMANCE_PROTOCOLS = ("talkie", "minara", "cuckoo")
DEMO_PROTOCOLS = ("talkie", "minara", "cuckoo")


def add_server_protocol(
    parser: argparse.ArgumentParser, choices: tuple[str, ...] = SERVER_PROTOCOLS
) -> None:
    parser.add_argument(
        "--protocol",
        choices=choices,
        default="talkie",
        help="the protocol the server speaks (default: %(default)s)",
    )


def add_client_protocol(parser: argparse.ArgumentParser) -> None:
    """`--protocol` of the commands that talk to a server: only the protocols a backend speaks
    (`talkie_tui.backends.PROTOCOLS`) are choices; without it, the server's own is used.

    `ask` and `threads` pass it to `backends.connect`, `login` to its sign-in (OAuth for a
    Talkie server, a token for a Minara gateway, an e-mailed code for a Cuckoo hub), and
    `connect` to the TUI's connect screen.
    """
    parser.add_argument(
        "--protocol",
        choices=CLIENT_PROTOCOLS,
        default=None,
        help="the protocol the server speaks: talkie, minara or cuckoo (default: found out "
        "from the server)",
    )
