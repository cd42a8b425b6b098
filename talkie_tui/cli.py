"""The `talkie` command: parses arguments and calls into the layers below."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from talkie_tui import __version__
from talkie_tui.backends import PROTOCOLS as CLIENT_PROTOCOLS
from talkie_tui.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from talkie_tui.ui.app import TalkieApp

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


def _add_server(
    parser: argparse.ArgumentParser,
    *,
    token: bool = True,
    optional: bool = False,
    server_help: str | None = None,
) -> None:
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


def _add_server_protocol(
    parser: argparse.ArgumentParser, choices: tuple[str, ...] = SERVER_PROTOCOLS
) -> None:
    parser.add_argument(
        "--protocol",
        choices=choices,
        default="talkie",
        help="the protocol the server speaks (default: %(default)s)",
    )


def _add_client_protocol(parser: argparse.ArgumentParser) -> None:
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
    _add_server(connect, optional=True)
    connect.add_argument("--thread", metavar="ID", help="open this thread")
    connect.add_argument(
        "--pair", metavar="CODE", help="join a hub agent by the pairing code its owner gave"
    )
    _add_client_protocol(connect)

    demo = commands.add_parser(
        "demo",
        help="start the reference server on 127.0.0.1 and talk to its demo agent",
        description="Starts the reference server on a free 127.0.0.1 port (test mode, the demo "
        "agent, fake voice) and opens the TUI on it. Without a terminal it runs a short scripted "
        "conversation instead and keeps serving until Ctrl+C.",
    )
    _add_server_protocol(demo, DEMO_PROTOCOLS)

    serve = commands.add_parser(
        "serve",
        help="run the reference server alone; prints its URL",
        description="Runs the reference server until Ctrl+C; its URL is the one line on stdout.",
    )
    _add_server_protocol(serve)
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

    ask = commands.add_parser(
        "ask",
        help="send one message and print the answer",
        description="Exit codes: 0 finished, 1 failed, 2 bad usage, 3 sign-in needed.",
    )
    _add_server(ask)
    ask.add_argument("message", metavar="MESSAGE")
    ask.add_argument("--thread", metavar="ID", help="continue this thread")
    ask.add_argument("--json", action="store_true", help="print every event as a JSON line")
    _add_client_protocol(ask)

    login = commands.add_parser(
        "login",
        help="sign in to a server in the browser (OAuth); works over SSH too",
        description="Opens the server's sign-in page (or prints its address) and keeps the "
        "sign-in in the system keyring. Over SSH, open the address on any computer and paste "
        "the address the browser ends on. A Minara gateway asks for its token, a Cuckoo hub "
        "for your e-mail address and the code it sends. Exit codes: 0 signed in, 1 failed, "
        "3 not signed in.",
    )
    _add_server(login, token=False)
    _add_client_protocol(login)
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
    _add_server(logout, token=False)
    commands.add_parser("servers", help="list known servers and whether you are signed in")

    threads = commands.add_parser("threads", help="list the threads on a server")
    _add_server(threads)
    _add_client_protocol(threads)

    _add_conformance(commands)

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
    _add_bridge(commands)
    return parser


def _add_conformance(commands: Any) -> None:
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
    _add_server(
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


def _add_bridge(commands: Any) -> None:
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
    _add_server(cuckoo)
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


def _bridge(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
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


def _serve(args: argparse.Namespace) -> int:
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

    others = [
        flag
        for flag, given in (
            ("--test-mode", args.test_mode),
            ("--dev-token", args.dev_token),
            ("--oauth-issuer", args.oauth_issuer),
            ("--fake-voice", args.fake_voice),
            ("--fake-voice-script", args.fake_voice_script),
        )
        if given
    ]
    if others:
        print(f"talkie: {others[0]} is not an option of a Cuckoo hub", file=sys.stderr)
        return ExitCode.USAGE
    return serve_cuckoo(host=args.host, port=args.port, db=args.db, dev=args.dev)


def _serve_minara(args: argparse.Namespace) -> int:
    from talkie_tui.commands.serve import serve_minara

    talkie_only = [
        flag
        for flag, given in (
            ("--oauth-issuer", args.oauth_issuer),
            ("--fake-voice", args.fake_voice),
            ("--fake-voice-script", args.fake_voice_script),
        )
        if given
    ]
    if talkie_only:
        print(f"talkie: {talkie_only[0]} is for --protocol talkie only", file=sys.stderr)
        return ExitCode.USAGE
    token = args.dev_token or os.environ.get("GATEWAY_AUTH_TOKEN") or None
    return serve_minara(
        host=args.host, port=args.port, db=args.db, auth_token=token, test_mode=args.test_mode
    )


TEXTUAL_FPS = "120"
"""Most frames a second the TUI draws (Textual's TEXTUAL_FPS, 60 by default; a person's own
setting wins). Frames come only when something changed; a key typed while an answer streams
waits less for the next one: 20 ms at the 95th percentile instead of 38 at 60
(benchmarks/terminal_stream.py), for no measurable CPU."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `talkie` console script.

    When the reader of stdout goes away (`talkie ask … | head -3`), talkie ends as `cat` does:
    quietly, killed by SIGPIPE (a shell shows 141). A run in progress is not cancelled: the
    connection just closes, and the server finishes the run (§5 disconnect is not cancel).
    """
    os.environ.setdefault("TEXTUAL_FPS", TEXTUAL_FPS)  # read when Textual is first imported
    try:
        code = _command(argv)
    except BrokenPipeError:
        _reader_gone()
    except SystemExit:  # argparse's --help and usage errors
        _flush_stdout()
        raise
    _flush_stdout()
    return code


def _flush_stdout() -> None:
    """Write out what is buffered now: a reader that left shows here, not as a warning at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _reader_gone()


def _reader_gone() -> NoReturn:
    """End quietly, the way a tool whose output pipe closed does: by SIGPIPE."""
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    # Python ignores SIGPIPE (and so gets BrokenPipeError); put back the default and take it.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    # No SIGPIPE here (Windows): exit 1, with stdout on devnull so the final flush is quiet.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(ExitCode.FAILED)


def _split_agent_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`talkie conformance agent … -- COMMAND ARGS…`: the arguments before `--`, and the agent's
    command after it (argparse would read its options as talkie's own)."""
    arguments = list(argv)
    if "conformance" in arguments and "--" in arguments:
        cut = arguments.index("--")
        if arguments.index("conformance") < cut:
            return arguments[:cut], arguments[cut + 1 :]
    return arguments, []


def _command(argv: Sequence[str] | None) -> int:
    """Parse the command line and run the command; its exit code."""
    parser = build_parser()
    arguments, agent_command = _split_agent_command(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(arguments)
    command = args.command
    if command is None:
        parser.print_help()
        return ExitCode.USAGE
    if args.debug:
        _start_debug_log(args)
    if command == "serve":
        return _serve(args)
    if command == "demo":
        from talkie_tui.commands.demo import run_demo

        return run_demo(protocol=args.protocol)
    if command == "connect":
        app = connect_app(args)
        app.run()
        return app.return_code or ExitCode.OK
    if command == "ask":
        from talkie_tui.commands.ask import ask

        if not args.message.strip():
            parser.error("MESSAGE is empty")
        return _run(
            ask(
                args.server,
                args.message,
                token=args.token,
                thread=args.thread,
                as_json=args.json,
                protocol=args.protocol,
                allow_private_http=args.allow_private_http,
            )
        )
    if command == "login":
        from talkie_tui.commands.login import login

        return _run(
            login(
                args.server,
                no_browser=args.no_browser,
                store_kind=args.store,
                allow_private_http=args.allow_private_http,
                protocol=args.protocol,
            )
        )
    if command == "logout":
        from talkie_tui.commands.login import logout

        return _run(logout(args.server, allow_private_http=args.allow_private_http))
    if command == "servers":
        from talkie_tui.commands.servers import list_servers

        return list_servers()
    if command == "threads":
        from talkie_tui.commands.threads import list_threads

        return _run(
            list_threads(
                args.server,
                token=args.token,
                protocol=args.protocol,
                allow_private_http=args.allow_private_http,
            )
        )
    if command == "conformance":
        from talkie_tui.conformance.command import conformance

        return _run(conformance(args, agent_command, parser.error))
    if command == "doctor":
        from talkie_tui.commands.doctor import doctor

        return _run(doctor())
    if command == "bridge":
        return _bridge(parser, args)
    if command == "devices":
        from talkie_tui.commands.devices import list_audio_devices

        return list_audio_devices()
    parser.error(f"unknown command {command}")  # pragma: no cover
    return ExitCode.USAGE  # pragma: no cover


def connect_app(args: argparse.Namespace) -> TalkieApp:
    """The TUI of `talkie connect` for its parsed arguments (not run yet)."""
    from talkie_tui.config import development_token, gateway_token, hub_token
    from talkie_tui.ui.app import TalkieApp

    return TalkieApp(
        args.server,
        token=development_token(args.token),
        gateway_token=gateway_token(args.token),
        hub_token=hub_token(args.token),
        thread_id=args.thread,
        allow_private_http=args.allow_private_http,
        protocol=args.protocol,
        pair_code=args.pair,
    )


def _start_debug_log(args: argparse.Namespace) -> None:
    """Open the debug log, say where it is, and record what the network looks like."""
    import logging
    import platform

    from talkie_tui.logs import add_secret, setup_logging
    from talkie_tui.protocol.net.http import proxy_settings, trust_store

    add_secret(getattr(args, "token", None))  # a --token would otherwise be logged verbatim
    try:
        path = setup_logging(True)
    except OSError as error:
        print(f"talkie: cannot write the debug log: {error}", file=sys.stderr)
        return
    print(f"talkie: writing a debug log to {path}", file=sys.stderr, flush=True)
    log = logging.getLogger("talkie_tui")
    log.info(
        "talkie %s, Python %s on %s", __version__, platform.python_version(), platform.platform()
    )
    log.info("command: %s", args.command)
    proxies = proxy_settings()
    for scheme, proxy in (("https", proxies.https), ("http", proxies.http)):
        log.info("%s proxy: %s", scheme, f"{proxy.shown} ({proxy.source})" if proxy else "none")
    log.info("no proxy for: loopback, %s", ", ".join(proxies.no_proxy) or "nothing else")
    trust = trust_store()
    log.info("certificates: %s", trust.system)
    for extra in trust.extra:
        log.info("%s: %s %s", extra.variable, extra.path, extra.problem or "(loaded)")


def _run(coroutine: Coroutine[Any, Any, int]) -> int:
    import asyncio  # only the commands that run one: `--help` and `servers` do without

    try:
        return asyncio.run(coroutine)
    except KeyboardInterrupt:
        print("talkie: interrupted.", file=sys.stderr)
        return ExitCode.INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
