"""`talkie demo` and `talkie serve`: their arguments, and starting the reference server of the
protocol asked for (the servers are imported only then)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from talkie_tui.commands.arguments import DEMO_PROTOCOLS, add_server_protocol
from talkie_tui.core.exit_codes import ExitCode


def add_serving(commands: Any) -> None:
    """`talkie demo` and `talkie serve`: the reference servers of each protocol."""
    demo = commands.add_parser(
        "demo",
        help="start the reference server on 127.0.0.1 and talk to its demo agent",
        description="Starts the reference server on a free 127.0.0.1 port (test mode, the demo "
        "agent, fake voice) and opens the TUI on it. Without a terminal it runs a short scripted "
        "conversation instead and keeps serving until Ctrl+C.",
    )
    add_server_protocol(demo, DEMO_PROTOCOLS)

    serve = commands.add_parser(
        "serve",
        help="run the reference server alone; prints its URL",
        description="Runs the reference server until Ctrl+C; its URL is the one line on stdout.",
    )
    add_server_protocol(serve)
    serve.add_argument("--host", default="127.0.0.1", metavar="H", help="default: %(default)s")
    serve.add_argument("--port", type=int, default=0, metavar="P", help="0 picks a free port")
    serve.add_argument("--test-mode", action="store_true", help="answer the §11 test messages")
    serve.add_argument(
        "--dev-token",
        "--auth-token",
        dest="dev_token",
        metavar="T",
        help="require this bearer token (a Minara gateway also reads $GATEWAY_AUTH_TOKEN)",
    )
    serve.add_argument("--db", type=Path, metavar="PATH", help="SQLite file (default: data dir)")
    serve.add_argument(
        "--dev",
        action="store_true",
        help="Cuckoo hub: development mode (the X-Dev-User header, sign-in codes in the log, "
        "webhooks to loopback and private addresses)",
    )
    serve.add_argument(
        "--oauth-issuer",
        metavar="URL",
        help="publish this OAuth issuer and check its access tokens by introspection (RFC 7662); "
        "the server's client credentials come from $TALKIE_OAUTH_CLIENT_ID and "
        "$TALKIE_OAUTH_CLIENT_SECRET (secrets don't belong on a command line), the required "
        "token audience from $TALKIE_OAUTH_AUDIENCE (optional)",
    )
    serve.add_argument(
        "--fake-voice",
        action="store_true",
        help="voice endpoints with a fake realtime provider on 127.0.0.1 (no account needed)",
    )
    serve.add_argument(
        "--fake-voice-script",
        type=Path,
        metavar="PATH",
        help="JSON script of what the fake provider 'hears' and does (default: the demo's)",
    )


def run_serve(args: argparse.Namespace) -> int:
    if args.dev and args.protocol != "cuckoo":
        print("talkie: --dev is for --protocol cuckoo only", file=sys.stderr)
        return ExitCode.USAGE
    if args.protocol == "minara":
        return _serve_minara(args)
    if args.protocol == "cuckoo":
        return _serve_cuckoo(args)
    from talkie_tui.devserver.talkie.config import ServerConfig
    from talkie_tui.devserver.talkie.runner import run_forever

    config = ServerConfig(
        host=args.host,
        port=args.port,
        test_mode=args.test_mode,
        dev_token=args.dev_token,
        db_path=args.db,
        oauth_issuer=args.oauth_issuer,
        # Read from the environment: a secret on the command line shows up in `ps` and history.
        oauth_client_id=os.environ.get("TALKIE_OAUTH_CLIENT_ID") or None,
        oauth_client_secret=os.environ.get("TALKIE_OAUTH_CLIENT_SECRET") or None,
        oauth_audience=os.environ.get("TALKIE_OAUTH_AUDIENCE") or None,
        fake_voice=args.fake_voice or args.fake_voice_script is not None,
        fake_voice_script=args.fake_voice_script,
    )
    if config.oauth_issuer and not (config.oauth_client_id and config.oauth_client_secret):
        print(
            "talkie: --oauth-issuer without TALKIE_OAUTH_CLIENT_ID and TALKIE_OAUTH_CLIENT_SECRET: "
            "the issuer is published, but its access tokens cannot be checked",
            file=sys.stderr,
        )

    def ready(url: str) -> None:
        print(url, flush=True)
        print(f"talkie: serving talkie/1 at {url} (Ctrl+C to stop)", file=sys.stderr, flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        run_forever(config, on_ready=ready)
    return ExitCode.OK


def _serve_cuckoo(args: argparse.Namespace) -> int:
    from talkie_tui.commands.serve import serve_cuckoo

    refused = _first_given(
        args, "--test-mode", "--dev-token", "--oauth-issuer", "--fake-voice", "--fake-voice-script"
    )
    if refused:
        print(f"talkie: {refused} is not an option of a Cuckoo hub", file=sys.stderr)
        return ExitCode.USAGE
    return serve_cuckoo(host=args.host, port=args.port, db=args.db, dev=args.dev)


def _serve_minara(args: argparse.Namespace) -> int:
    from talkie_tui.commands.serve import serve_minara

    talkie_only = _first_given(args, "--oauth-issuer", "--fake-voice", "--fake-voice-script")
    if talkie_only:
        print(f"talkie: {talkie_only} is for --protocol talkie only", file=sys.stderr)
        return ExitCode.USAGE
    token = args.dev_token or os.environ.get("GATEWAY_AUTH_TOKEN") or None
    return serve_minara(
        host=args.host, port=args.port, db=args.db, auth_token=token, test_mode=args.test_mode
    )


def _first_given(args: argparse.Namespace, *flags: str) -> str | None:
    """The first of `flags` given on the command line (a serve option another protocol lacks)."""
    for flag in flags:
        if getattr(args, flag.removeprefix("--").replace("-", "_")):
            return flag
    return None
