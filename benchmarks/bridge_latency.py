"""The bridge's added latency per reply (issue 13; goal < 20 ms).

Every part runs as it would be deployed, each in a process of its own on 127.0.0.1: the
reference Talkie server (test mode, demo agent), the reference Cuckoo hub (dev mode), and
`talkie bridge cuckoo` itself (the real command, signed in with a development token). This
process is the person and the yardstick. Separate processes matter: in one interpreter the
hub's, the server's and the bridge's event loops take turns at one interpreter lock (a thread
that wants it may wait out the 5 ms switch interval at every hop), and one process-wide garbage
collection stalls all of them at once, which the figures would blame on the bridge.

A round is one message on each path, in an order that rotates from round to round so a noisy
moment of the machine hits every path alike:

- bridged: the person POSTs the message to the hub and watches the client socket, from the POST
  to the first `message.delta` of the agent's reply and to its `message.completed`;
- direct: the same Talkie run (same prompt, a new thread each time) through the talkie/1
  backend, from the send to the first text delta and to RUN_FINISHED;
- baseline (with `--baseline DIR`): like bridged, through the bridge of another checkout of the
  project (`git archive REV | tar -x -C DIR`), serving an agent of its own on the same hub, so
  that before and after are measured in one run;
- webhook (with `--webhook`): like bridged, through this checkout's bridge serving a webhook
  binding (`--webhook 127.0.0.1:PORT`: the hub's signed POSTs in, the agent API's HTTP routes
  out).

A bridge's added latency for a reply is its time minus the direct time of the same round. It
includes the hub's two hops (person → agent, agent → person), which a person on a hub pays
anyway. Two p99 figures are printed, since neither alone is the whole truth on a noisy machine:
`p99_ms` of the per-round differences (it also carries the direct path's own spread, so it
overstates the bridge's tail), and `p99_shift_ms`, the bridged p99 minus the direct p99 (the
tail the bridge adds to the distribution). Enough rounds make a p99 mean something: 500 rounds
leave five replies above it.

The prompt must be answered with text only (`talkie-test:echo …`, `help`): a reply is found by
the `reply_to` its first message carries, and its streamed message's completion ends it.
Prints one JSON line per path and stage, then a summary line with the load average. For each
bridge, `delta_gap` is the pace of its deltas as the person's client got them (the gaps between
a reply's message's deltas; the bridge flushes about every 40 ms): with a long answer,
`--prompt 'talkie-test:markdown 4000 2000 7'`, it is the figure tests/bridge/test_bridge_long.py
leaves to this benchmark.

    .venv/bin/python benchmarks/bridge_latency.py [--rounds 500] [--baseline DIR] [--webhook]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from talkie_tui import backends
from talkie_tui.core.tokens import StaticToken
from talkie_tui.core.waiting import wait_within
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.ids import new_id
from talkie_tui.devserver.cuckoo.runner import serve_in_thread as serve_hub
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread as serve_talkie

TOKEN = "bench-token"
GOAL_MS = 20.0
HERE = Path(__file__).resolve().parent.parent
FAST_RATE = (10_000.0, 10_000)
STAGES = (("first_delta", 0), ("completed", 1))


def _percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _figures(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p90_ms": round(_percentile(ordered, 0.90) * 1000, 2),
        "p99_ms": round(_percentile(ordered, 0.99) * 1000, 2),
    }


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system) a process used so far, where /proc tells."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return None


def _load() -> list[float]:
    with contextlib.suppress(OSError):
        return [round(value, 2) for value in os.getloadavg()]
    return []


# --- the servers, each in a process of its own ------------------------------------------


def _server_child(kind: str, folder: str, pipe: Connection) -> None:
    """A reference server in this child process: its URL up the pipe, then serve until told."""
    if kind == "hub":
        config: Any = HubConfig(
            dev=True,
            db_path=Path(folder) / "hub.sqlite3",
            person_send_rate=FAST_RATE,
            agent_send_rate=FAST_RATE,
            stream_sweep_interval=0.5,
        )
        serving = serve_hub(config)
    else:
        config = ServerConfig(
            test_mode=True, dev_token=TOKEN, demo_agent=True, db_path=Path(folder) / "talkie.db"
        )
        serving = serve_talkie(config)
    with serving as url:
        pipe.send(url)
        pipe.recv()  # anything, or the parent gone: stop


@contextlib.contextmanager
def server_process(kind: str, folder: Path) -> Iterator[str]:
    """Run the reference `kind` server ("hub" or "talkie") in a child process; its URL."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_server_child, args=(kind, str(folder), child), daemon=True)
    process.start()
    try:
        if not parent.poll(60):
            raise RuntimeError(f"the {kind} server did not start")
        yield str(parent.recv())
    finally:
        with contextlib.suppress(OSError):
            parent.send("stop")
        process.join(15)
        if process.is_alive():
            process.kill()


# --- the hub's side: agents, bridges, the person's socket -------------------------------


async def make_agent(
    http: httpx.AsyncClient, owner: str, webhook_url: str | None = None
) -> tuple[str, str]:
    """A new agent with a socket binding (or a webhook one posting to `webhook_url`): its
    secret and the owner's DM with it."""
    headers = {"X-Dev-User": owner}
    made = await http.post(
        "/v1/mgmt/agents",
        headers=headers,
        json={"handle": "bench-" + new_id("agt")[-6:], "display_name": "Bench"},
    )
    made.raise_for_status()
    agent_id = made.json()["agent"]["id"]
    mode = {"mode": "webhook", "webhook_url": webhook_url} if webhook_url else {"mode": "socket"}
    bound = await http.post(f"/v1/mgmt/agents/{agent_id}/binding", headers=headers, json=mode)
    bound.raise_for_status()
    listed = await http.get("/v1/client/conversations", headers=headers)
    dm = next(
        c["id"]
        for c in listed.json()["conversations"]
        if any(p["id"] == agent_id for p in c["participants"])
    )
    return bound.json()["secret"], dm


@contextlib.asynccontextmanager
async def bridge_process(
    source: Path, talkie_url: str, hub_url: str, secret: str, folder: Path, *extra: str
) -> AsyncIterator[int]:
    """`talkie bridge cuckoo` of the project at `source`, running until the block ends."""
    env = {
        **os.environ,
        "PYTHONPATH": str(source),
        "TALKIE_HOME": str(folder / "home"),
        "TALKIE_TOKEN": TOKEN,
        "LANGUAGE": "en",
        "LC_ALL": "C.UTF-8",
    }
    env.pop("CUCKOO_BINDING_SECRET", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "talkie_tui.cli",
        "bridge",
        "cuckoo",
        talkie_url,
        "--hub",
        hub_url,
        "--secret",
        secret,
        "--state",
        str(folder / "bridge.sqlite3"),
        *extra,
        cwd=source,
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    lines: list[str] = []

    async def ready() -> None:
        assert process.stdout is not None
        while b"waiting for messages" not in (line := await process.stdout.readline()):
            if not line:
                raise RuntimeError(f"the bridge of {source} ended: {lines}")
            lines.append(line.decode(errors="replace"))

    await wait_within(ready(), 60)

    async def drain() -> None:  # a line per reply: a full pipe would stall the bridge
        assert process.stdout is not None
        while await process.stdout.readline():
            pass

    drained = asyncio.ensure_future(drain())
    try:
        yield process.pid
    finally:
        process.terminate()
        await wait_within(process.wait(), 15)
        drained.cancel()


class Feed:
    """The person's client socket: the deltas and the completion of each agent reply."""

    def __init__(self) -> None:
        self.first_delta: dict[str, float] = {}
        self.deltas: dict[str, list[float]] = {}  # message id -> when each delta came
        self.completed: dict[str, float] = {}
        self.reply_to: dict[str, str] = {}  # agent message id -> the person's message id
        self.changed = asyncio.Event()

    def take(self, frame: dict[str, Any]) -> None:
        """Note the time of what matters in one frame of the client socket."""
        now = time.perf_counter()
        kind, data = frame.get("type"), frame.get("data") or {}
        if kind == "message.delta":
            self.first_delta.setdefault(data["message_id"], now)
            self.deltas.setdefault(data["message_id"], []).append(now)
        elif kind in ("message.started", "message.completed", "message.created"):
            message = data["message"]
            if message["sender"]["kind"] != "agent":
                return
            if message.get("reply_to"):
                self.reply_to[message["id"]] = message["reply_to"]["id"]
            if kind == "message.completed":
                self.completed.setdefault(message["id"], now)
        self.changed.set()

    async def reply_of(self, asked: str, within: float = 30) -> tuple[float, float, list[float]]:
        """When the first delta and the completion of the reply to `asked` arrived, and when
        each delta of that message did."""

        async def find() -> tuple[float, float, list[float]]:
            while True:
                for agent_message, person_message in self.reply_to.items():
                    if person_message == asked and agent_message in self.completed:
                        first = self.first_delta.get(agent_message, self.completed[agent_message])
                        deltas = self.deltas.get(agent_message, [])
                        return first, self.completed[agent_message], deltas
                self.changed.clear()
                await self.changed.wait()

        return await wait_within(find(), within)


async def bridged_once(
    http: httpx.AsyncClient, owner: str, dm: str, feed: Feed, prompt: str, gaps: list[float]
) -> tuple[float, float]:
    """One message to the agent in `dm`: seconds to the reply's first delta and its end; the
    seconds between its deltas go to `gaps`."""
    began = time.perf_counter()
    sent = await http.post(
        f"/v1/client/conversations/{dm}/messages",
        headers={"X-Dev-User": owner},
        json={"text": prompt},
    )
    sent.raise_for_status()
    first, done, deltas = await feed.reply_of(sent.json()["message"]["id"])
    gaps.extend(later - earlier for earlier, later in itertools.pairwise(deltas))
    return first - began, done - began


async def direct_once(backend: Any, prompt: str) -> tuple[float, float]:
    """One run straight on the Talkie server: seconds to the first text delta and the end."""
    session = backend.new_session()
    outgoing = session.prepare(prompt)
    began = time.perf_counter()
    first: float | None = None
    async for update in session.send(outgoing):
        if first is None and update.delta:
            first = time.perf_counter()
    done = time.perf_counter()
    return (first or done) - began, done - began


# --- the run ------------------------------------------------------------------------------


async def measure(
    talkie_url: str, hub_url: str, folder: Path, options: argparse.Namespace
) -> tuple[dict[str, list[tuple[float, float]]], dict[str, float], dict[str, list[float]]]:
    """Run the rounds: every path's (first delta, completed) seconds, warm-up left out, each
    bridge's CPU milliseconds per reply, and the seconds between each bridge's deltas."""
    sources = {"bridged": HERE}
    if options.baseline is not None:
        sources["baseline"] = options.baseline.resolve()
    if options.webhook:
        sources["webhook"] = HERE
    owner = new_id("usr")
    async with (
        httpx.AsyncClient(base_url=hub_url, timeout=30, trust_env=False) as http,
        contextlib.AsyncExitStack() as stack,
    ):
        conversations: dict[str, str] = {}
        pids: dict[str, int] = {}
        for path, source in sources.items():
            extra: tuple[str, ...] = ()
            webhook_url = None
            if path == "webhook":
                with socket.create_server(("127.0.0.1", 0)) as probe:
                    port = probe.getsockname()[1]
                webhook_url = f"http://127.0.0.1:{port}/cuckoo"
                extra = ("--webhook", f"127.0.0.1:{port}")
            secret, conversations[path] = await make_agent(http, owner, webhook_url)
            place = folder / path
            place.mkdir()
            pids[path] = await stack.enter_async_context(
                bridge_process(source, talkie_url, hub_url + "/", secret, place, *extra)
            )
        direct_backend = await backends.connect(
            talkie_url, protocol="talkie", tokens=StaticToken(TOKEN)
        )
        stack.push_async_callback(direct_backend.aclose)
        feed = Feed()
        socket_url = "ws://" + hub_url.removeprefix("http://") + "/v1/client/socket"
        ws = await stack.enter_async_context(
            connect(socket_url, additional_headers={"X-Dev-User": owner}, proxy=None)
        )

        async def read() -> None:
            async for raw in ws:
                feed.take(json.loads(raw))

        reader = asyncio.ensure_future(read())
        stack.callback(reader.cancel)
        paths = [*sources, "direct"]
        results: dict[str, list[tuple[float, float]]] = {path: [] for path in paths}
        gaps: dict[str, list[float]] = {path: [] for path in sources}
        cpu_before: dict[str, float | None] = {}
        for index in range(options.warmup + options.rounds):
            if index == options.warmup:
                cpu_before = {path: _cpu_seconds(pid) for path, pid in pids.items()}
            shift = index % len(paths)
            for path in paths[shift:] + paths[:shift]:
                if path == "direct":
                    taken = await direct_once(direct_backend, options.prompt)
                else:
                    counted = gaps[path] if index >= options.warmup else []
                    taken = await bridged_once(
                        http, owner, conversations[path], feed, options.prompt, counted
                    )
                if index >= options.warmup:
                    results[path].append(taken)
        cpu_ms: dict[str, float] = {}
        for path, pid in pids.items():
            before, after = cpu_before.get(path), _cpu_seconds(pid)
            if before is not None and after is not None:
                cpu_ms[path] = round((after - before) * 1000 / options.rounds, 2)
    return results, cpu_ms, gaps


def report(
    results: dict[str, list[tuple[float, float]]],
    cpu_ms: dict[str, float],
    gaps: dict[str, list[float]],
    base: dict[str, Any],
) -> None:
    """Print the JSON lines: each path's figures, each bridge's pace of deltas and added
    latency, a summary."""
    direct = results["direct"]
    summary: dict[str, Any] = {**base, "summary": True, "goal_ms": GOAL_MS}
    for path, pairs in results.items():
        for stage, at in STAGES:
            figures = _figures([p[at] for p in pairs])
            print(json.dumps({**base, "path": path, "stage": stage, **figures}))
    for path, between in gaps.items():
        if between:  # a reply of one delta has no gap
            figures = {**_figures(between), "gaps": len(between)}
            print(json.dumps({**base, "path": path, "stage": "delta_gap", **figures}))
    for path, pairs in results.items():
        if path == "direct":
            continue
        mine: dict[str, Any] = {"cpu_ms_per_reply": cpu_ms.get(path)}
        for stage, at in STAGES:
            added = _figures([b[at] - d[at] for b, d in zip(pairs, direct, strict=True)])
            ordered = sorted(p[at] for p in pairs), sorted(d[at] for d in direct)
            shift = _percentile(ordered[0], 0.99) - _percentile(ordered[1], 0.99)
            added["p99_shift_ms"] = round(shift * 1000, 2)
            print(json.dumps({**base, "path": f"{path}-added", "stage": stage, **added}))
            mine[stage] = {name: added[name] for name in ("median_ms", "p99_ms", "p99_shift_ms")}
        for name in ("median_ms", "p99_ms", "p99_shift_ms"):
            worst = max(mine[stage][name] for stage, _at in STAGES)
            mine[f"meets_goal_{name.removesuffix('_ms')}"] = worst < GOAL_MS
        summary[f"{path}_added"] = mine
    print(json.dumps({**summary, "load_average": _load()}))


async def main(options: argparse.Namespace) -> None:
    """Start everything, run the rounds, print the figures."""
    load_before = _load()
    with (
        tempfile.TemporaryDirectory() as name,
        server_process("talkie", Path(name)) as talkie_url,
        server_process("hub", Path(name)) as hub_url,
    ):
        results, cpu_ms, gaps = await measure(talkie_url, hub_url, Path(name), options)
    base = {
        "benchmark": "bridge_latency",
        "rounds": options.rounds,
        "prompt": options.prompt,
        "load_average_before": load_before,
    }
    report(results, cpu_ms, gaps, base)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--prompt", default="talkie-test:echo The bridge carries this answer.")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="another checkout of the project whose bridge is measured alongside",
    )
    parser.add_argument(
        "--webhook",
        action="store_true",
        help="also measure this checkout's bridge serving a webhook binding",
    )
    asyncio.run(main(parser.parse_args()))
