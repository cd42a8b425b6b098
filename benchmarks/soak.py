"""1,000 runs in one session: does the client's memory stay flat?

The reference server runs in its own process (its SQLite and run history are not the client's
memory). This process is the client, going the whole way a chat goes: `TalkieSession.send` over
HTTP, SSE parsing, event decoding, the reducer, a decision for half of the proposed actions,
and the TUI's Markdown rendering of every answer. The mix is echo, card, action and slow
(streamed a few words at a time); a new thread starts every THREAD_RUNS runs, as a person
starts new conversations, so the conversation itself does not count as growth.

Memory is Python's own (tracemalloc, after a garbage collection) and the process's resident
size, both measured after the first 100 runs and at the end. Prints one JSON line; the target
is growth within 10 % of the figure after 100 runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from talkie_tui.backends.talkie.session import TalkieSession
from talkie_tui.chat.turns import ActionPart
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.ui.support.markdown import render_markdown

TOKEN = "soak-token"
MIX = ["echo soak test {n}", "card", "action", "echo **bold** `code` {n}", "slow"]
THREAD_RUNS = 20
SERVER = """
import sys
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import run_forever
config = ServerConfig(test_mode=True, dev_token=sys.argv[1], db_path=sys.argv[2],
                      slow_seconds=0.3, demo_delay=0, ping_interval=15)
run_forever(config, on_ready=lambda url: print(url, flush=True))
"""


def start_server() -> tuple[subprocess.Popen[str], str]:
    """The reference server in its own process; its URL."""
    db = Path(tempfile.mkdtemp(prefix="talkie-soak-")) / "soak.sqlite3"
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, TOKEN, str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise SystemExit(f"the reference server did not start: {url!r}")
    return process, url


def memory() -> dict[str, float]:
    """Python heap in use (after a collection) and the resident size, in MB."""
    gc.collect()
    current, _ = tracemalloc.get_traced_memory()
    rss_kb = _rss_kb()
    return {"python_mb": current / 1e6, "rss_mb": rss_kb / 1e3}


def growth(after_100: dict[str, float], end: dict[str, float]) -> dict[str, float]:
    """Memory after run 100 and at the end, and the growth between them in percent."""
    figures: dict[str, float] = {}
    for kind, digits in (("python_mb", 2), ("rss_mb", 1)):
        figures[f"{kind}_after_100"] = round(after_100[kind], digits)
        figures[f"{kind}_end"] = round(end[kind], digits)
        name = kind.removesuffix("_mb")
        figures[f"{name}_growth_percent"] = round(100 * (end[kind] / after_100[kind] - 1), 1)
    return figures


def _rss_kb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return float(line.split()[1])
    except OSError:
        pass
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


async def soak(url: str, runs: int) -> dict[str, Any]:
    """`runs` runs in one client; memory after 100 and at the end."""
    client = await TalkieClient.connect(url, tokens=StaticToken(TOKEN))
    session = TalkieSession(client, None)
    after_100: dict[str, float] = {}
    failures = 0
    decided = 0
    started = time.monotonic()
    for n in range(runs):
        if n % THREAD_RUNS == 0:
            session = TalkieSession(client, None)  # a new conversation
        text = "talkie-test:" + MIX[n % len(MIX)].format(n=n)
        request = session.prepare(text)
        async for _update in session.send(request):
            pass
        if request.error is not None or not request.finished:
            failures += 1
        answer = session.conversation.turns[-1]
        render_markdown(answer.text)
        for part in answer.parts:
            if isinstance(part, ActionPart) and part.action.status == "pending" and n % 2 == 0:
                result = await client.decide(part.action, "confirm")
                session.conversation.apply_decision(result)
                decided += 1
        if n + 1 == 100:
            after_100 = memory()
    wall = time.monotonic() - started
    end = memory()
    await client.aclose()
    return {
        "runs": runs,
        "mode": "chat",
        "failed_runs": failures,
        "decisions": decided,
        "seconds": round(wall, 1),
        **growth(after_100, end),
    }


async def soak_tui(url: str, runs: int) -> dict[str, Any]:
    """The same runs typed into the real app (headless): composer, stream, transcript, cards."""
    from textual.pilot import Pilot

    from talkie_tui.config import KnownServers, Settings
    from talkie_tui.ui.app import TalkieApp
    from talkie_tui.ui.chat.screen import ChatScreen

    home = Path(tempfile.mkdtemp(prefix="talkie-soak-home-"))
    app = TalkieApp(
        url,
        token=TOKEN,
        settings=Settings(downloads_dir=home / "downloads"),
        known=KnownServers(home / "servers.json"),
    )
    after_100: dict[str, float] = {}
    failures = 0

    async def until(pilot: Pilot[None], condition: Any, limit: float = 30) -> None:
        deadline = time.monotonic() + limit
        while not condition():
            if time.monotonic() > deadline:
                raise SystemExit("the app stopped answering")
            await pilot.pause(0.01)

    started = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        # The chat screen is composed a moment after it becomes the screen.
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await until(pilot, lambda: screen.header.state == "connected")
        for n in range(runs):
            if n % THREAD_RUNS == 0 and n:
                screen.action_new_thread()
                await pilot.pause()
            screen.composer.focus()
            screen.composer.insert("talkie-test:" + MIX[n % len(MIX)].format(n=n))
            before = len(screen.session.conversation.turns)
            await pilot.press("enter")

            def answered(before: int = before) -> bool:
                turns = screen.session.conversation.turns
                return not screen.answering and len(turns) >= before + 2

            await until(pilot, answered)
            turn = screen.session.conversation.turns[-1]
            failures += turn.state != "done"
            if n + 1 == 100:
                after_100 = memory()
        end = memory()
    wall = time.monotonic() - started
    return {
        "runs": runs,
        "mode": "tui",
        "failed_runs": failures,
        "seconds": round(wall, 1),
        **growth(after_100, end),
    }


def main() -> None:
    """Parse options, run the soak, print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument(
        "--tui", action="store_true", help="type the runs into the real app (headless)"
    )
    args = parser.parse_args()
    if args.runs <= 100:
        raise SystemExit("--runs must be above 100 (memory is compared with run 100)")
    tracemalloc.start()
    process, url = start_server()
    try:
        figures = asyncio.run((soak_tui if args.tui else soak)(url, args.runs))
    finally:
        process.terminate()
        process.wait(timeout=10)
    figures.update(benchmark="soak", target_growth_percent=10)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
