"""The `talkie` command: parses arguments and calls into the layers below."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import signal
import sys
from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from talkie_tui import __version__
from talkie_tui.commands.bridging import run_bridge
from talkie_tui.commands.parser import build_parser
from talkie_tui.commands.serving import run_serve
from talkie_tui.core.exit_codes import ExitCode

if TYPE_CHECKING:
    from talkie_tui.ui.app import TalkieApp


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
    _light_process()
    try:
        code = _command(argv)
    except BrokenPipeError:
        _reader_gone()
    except SystemExit:  # argparse's --help and usage errors
        _flush_stdout()
        raise
    _flush_stdout()
    return code


def _light_process() -> None:
    """What a talkie process leaves out to start and end sooner (issue 24).

    - httpx's own command line: `import httpx` imports it whenever rich, pygments and click
      are installed (they are, for Textual and uvicorn), some 80 ms of every `talkie ask` for
      a tool talkie never runs. A None in `sys.modules` makes that import fail, and httpx
      falls back to its stub.
    - The last garbage collection: at exit Python walks every object it still holds (the
      wire models, AG-UI's, the modules) only to free memory the process gives back anyway:
      most of the ~100 ms `talkie ask` took to end. Frozen at exit, they are left out of it.
    """
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    atexit.unregister(gc.freeze)  # once, however many times main runs (tests)
    atexit.register(gc.freeze)


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
        return run_serve(args)
    if command == "demo":
        from talkie_tui.commands.demo import run_demo

        return run_demo(protocol=args.protocol)
    if command == "connect":
        # No garbage collection while the TUI starts: its imports and first screens make objects
        # that live on, and scanning them delayed the first frame by ~20 ms (issue 24).
        # `TalkieApp` turns collection back on once that frame is out.
        gc.disable()
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
        return run_bridge(parser, args)
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
