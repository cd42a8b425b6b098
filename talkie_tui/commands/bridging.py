"""`talkie bridge cuckoo`: its arguments, checked, and the bridge started (imported only then)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from talkie_tui.commands.arguments import add_server


def add_bridge(commands: Any) -> None:
    """`talkie bridge cuckoo SERVER --hub URL --secret S [--allow USER]… [--webhook HOST:PORT]`."""
    bridge = commands.add_parser(
        "bridge",
        help="serve a Talkie server's agent in another protocol (a Cuckoo hub)",
        description="Makes the agent of a Talkie server reachable from another protocol.",
    )
    kinds = bridge.add_subparsers(dest="bridge_kind", metavar="KIND", required=True)
    cuckoo = kinds.add_parser(
        "cuckoo",
        help="serve a Talkie server's agent as a Cuckoo agent",
        description="Connects to a Cuckoo hub's agent socket with the binding secret (or, with "
        "--webhook, receives a webhook binding's posts) and answers each conversation from the "
        "Talkie server SERVER, signed in as you (--token or $TALKIE_TOKEN, else the sign-in of "
        "`talkie login SERVER`): one Talkie thread per conversation, answers streamed, cards as "
        "messages with link buttons, actions as Confirm / Cancel buttons. Only the people "
        "named by --allow (default: the agent's owner) are answered; anyone else is told once "
        "that the agent is private. Runs until Ctrl+C (exit 0); exit 1 when the hub ends the "
        "binding (replaced, revoked, another backend connected) or the webhook address cannot "
        "be listened on, 2 on bad usage, 3 when sign-in to SERVER is needed.",
    )
    add_server(cuckoo)
    cuckoo.add_argument("--hub", metavar="URL", required=True, help="the hub's address")
    cuckoo.add_argument(
        "--secret",
        metavar="S",
        help="the agent's binding secret (bnd_sec_…); default $CUCKOO_BINDING_SECRET",
    )
    cuckoo.add_argument(
        "--allow",
        metavar="USER",
        action="append",
        default=[],
        help="a person (usr_…) the bridge answers; repeat for more (default: the agent's owner)",
    )
    cuckoo.add_argument(
        "--state",
        type=Path,
        metavar="PATH",
        help="the bridge's SQLite file (default: one per agent in the state folder)",
    )
    cuckoo.add_argument(
        "--webhook",
        metavar="HOST:PORT",
        help="serve a webhook-mode binding: listen on HOST:PORT for the hub's signed posts "
        "(the binding's https URL reaches it through your reverse proxy; a hub in development "
        "mode may post to http://127.0.0.1:PORT) and send replies over the hub's HTTP API; "
        "each post is answered at once and its work kept in the state file until done",
    )
    cuckoo.add_argument(
        "--greet",
        metavar="TEXT",
        help="the agent's first message in a conversation a person starts with it",
    )
    cuckoo.add_argument(
        "--starter",
        metavar="TEXT",
        action="append",
        default=[],
        help="something to ask, shown under the greeting as a quick reply (a tap sends it); "
        "repeat for more, up to 6, each 1 to 40 characters",
    )


def run_bridge(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from talkie_tui.commands.bridge import run_bridge_cuckoo

    secret = args.secret or os.environ.get("CUCKOO_BINDING_SECRET") or ""
    if not secret.startswith("bnd_sec_") or len(secret) <= len("bnd_sec_"):
        parser.error(
            "bridge cuckoo: --secret (or $CUCKOO_BINDING_SECRET) must be a bnd_sec_… secret"
        )
    for person in args.allow:
        if not person.startswith("usr_") or len(person) <= len("usr_"):
            parser.error(f"bridge cuckoo: --allow takes a person's id (usr_…), not {person!r}")
    webhook = None
    if args.webhook is not None:
        from talkie_tui.bridge.webhook import listen_address

        try:
            webhook = listen_address(args.webhook)
        except ValueError as error:
            parser.error(f"bridge cuckoo: --webhook: {error}")
    greeting = None
    if args.greet or args.starter:
        from talkie_tui.bridge.greeting import Greeting

        try:
            greeting = Greeting(args.greet or "", tuple(args.starter))
        except ValueError as error:
            parser.error(f"bridge cuckoo: --starter: {error}")
    return run_bridge_cuckoo(
        args.server,
        hub=args.hub,
        secret=secret,
        allow=args.allow,
        token=args.token,
        state_path=args.state,
        allow_private_http=args.allow_private_http,
        webhook=webhook,
        greeting=greeting,
    )
