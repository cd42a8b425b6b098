"""The bridge's added latency per reply (issue 13; goal < 20 ms).

The reference Talkie server (test mode, demo agent) and the reference Cuckoo hub (dev mode) run
on 127.0.0.1, and `talkie bridge cuckoo` runs in-process (its `CuckooBridge`). For each of N
messages a person POSTs the message to the hub and watches the client socket; measured from
the POST to the first `message.delta` of the agent's reply, and to its `message.completed`.
In the same run the same Talkie run (same prompt, a new message each time) is driven directly
through the talkie/1 backend, measured from the send to the first text delta and to
RUN_FINISHED. Their difference is the bridge's added latency (it includes the hub's two hops,
person → agent and agent → person, which a person on a hub pays anyway).

The prompt must be answered with text only (`talkie-test:echo …`, `help`): a reply is found by
the `reply_to` its first message carries, and its streamed message's completion ends it.

The two kinds alternate message by message, so a noisy moment of the machine hits both.
Prints one JSON line per measurement kind (median and p99, milliseconds), then a summary line.

    .venv/bin/python benchmarks/bridge_latency.py [--messages 50] [--prompt "talkie-test:echo hi"]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from talkie_tui import backends
from talkie_tui.bridge.cuckoo import FLUSH_INTERVAL, CuckooBridge
from talkie_tui.bridge.state import BridgeState
from talkie_tui.core.tokens import StaticToken
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.ids import new_id
from talkie_tui.devserver.cuckoo.runner import serve_in_thread as serve_hub
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread as serve_talkie

TOKEN = "bench-token"
GOAL_MS = 20.0


def _ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(p99 * 1000, 2),
    }


@contextlib.contextmanager
def servers(folder: Path) -> Iterator[tuple[str, str]]:
    with (
        serve_talkie(
            ServerConfig(
                test_mode=True,
                dev_token=TOKEN,
                demo_agent=True,
                db_path=folder / "talkie.sqlite3",
            )
        ) as talkie,
        serve_hub(
            HubConfig(
                dev=True,
                db_path=folder / "hub.sqlite3",
                person_send_rate=(1000.0, 1000),
                stream_sweep_interval=0.5,
            )
        ) as hub,
    ):
        yield talkie, hub


async def make_agent(http: httpx.AsyncClient, owner: str) -> tuple[str, str, str]:
    headers = {"X-Dev-User": owner}
    made = await http.post(
        "/v1/mgmt/agents",
        headers=headers,
        json={"handle": "bench-" + new_id("agt")[-6:], "display_name": "Bench"},
    )
    made.raise_for_status()
    agent_id = made.json()["agent"]["id"]
    bound = await http.post(
        f"/v1/mgmt/agents/{agent_id}/binding", headers=headers, json={"mode": "socket"}
    )
    bound.raise_for_status()
    listed = await http.get("/v1/client/conversations", headers=headers)
    dm = next(
        c["id"]
        for c in listed.json()["conversations"]
        if any(p["id"] == agent_id for p in c["participants"])
    )
    return agent_id, bound.json()["secret"], dm


class Feed:
    """The person's client socket: the first delta and the completion of each agent reply."""

    def __init__(self) -> None:
        self.first_delta: dict[str, float] = {}
        self.completed: dict[str, float] = {}
        self.reply_to: dict[str, str] = {}  # agent message id -> the person's message id
        self.changed = asyncio.Event()

    def take(self, frame: dict[str, Any]) -> None:
        now = time.perf_counter()
        kind, data = frame.get("type"), frame.get("data") or {}
        if kind == "message.delta":
            self.first_delta.setdefault(data["message_id"], now)
        elif kind in ("message.started", "message.completed", "message.created"):
            message = data["message"]
            if message["sender"]["kind"] != "agent":
                return
            if message.get("reply_to"):
                self.reply_to[message["id"]] = message["reply_to"]["id"]
            if kind == "message.completed":
                self.completed.setdefault(message["id"], now)
        self.changed.set()

    async def reply_of(self, asked: str, within: float = 30) -> tuple[float, float]:
        async def find() -> tuple[float, float]:
            while True:
                for agent_message, person_message in self.reply_to.items():
                    if person_message == asked and agent_message in self.completed:
                        first = self.first_delta.get(agent_message, self.completed[agent_message])
                        return first, self.completed[agent_message]
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(find(), within)


async def bridged_once(
    http: httpx.AsyncClient, owner: str, dm: str, feed: Feed, prompt: str
) -> tuple[float, float]:
    began = time.perf_counter()
    sent = await http.post(
        f"/v1/client/conversations/{dm}/messages",
        headers={"X-Dev-User": owner},
        json={"text": prompt},
    )
    sent.raise_for_status()
    first, done = await feed.reply_of(sent.json()["message"]["id"])
    return first - began, done - began


async def direct_once(backend: Any, prompt: str) -> tuple[float, float]:
    session = backend.new_session()
    outgoing = session.prepare(prompt)
    began = time.perf_counter()
    first: float | None = None
    async for update in session.send(outgoing):
        if first is None and update.delta:
            first = time.perf_counter()
    done = time.perf_counter()
    return (first or done) - began, done - began


async def main(messages: int, prompt: str, warmup: int) -> None:
    with tempfile.TemporaryDirectory() as folder, servers(Path(folder)) as (talkie_url, hub_url):
        owner = new_id("usr")
        async with httpx.AsyncClient(base_url=hub_url, timeout=30, trust_env=False) as http:
            _, secret, dm = await make_agent(http, owner)
            bridge_backend = await backends.connect(
                talkie_url, protocol="talkie", tokens=StaticToken(TOKEN)
            )
            direct_backend = await backends.connect(
                talkie_url, protocol="talkie", tokens=StaticToken(TOKEN)
            )
            state = BridgeState(Path(folder) / "bridge.sqlite3")
            bridge = CuckooBridge(
                backend=bridge_backend,
                hub_url=hub_url + "/",
                secret=secret,
                open_state=lambda _agent: state,
                say=lambda _line: None,
                warn=lambda line: print(f"bridge: {line}", file=sys.stderr),
            )
            running = asyncio.ensure_future(bridge.run())
            await asyncio.wait_for(bridge.ready.wait(), 10)
            feed = Feed()
            socket_url = "ws://" + hub_url.removeprefix("http://") + "/v1/client/socket"
            async with connect(
                socket_url, additional_headers={"X-Dev-User": owner}, proxy=None
            ) as ws:

                async def read() -> None:
                    async for raw in ws:
                        feed.take(json.loads(raw))

                reader = asyncio.ensure_future(read())
                bridged: list[tuple[float, float]] = []
                direct: list[tuple[float, float]] = []
                for index in range(warmup + messages):
                    b = await bridged_once(http, owner, dm, feed, prompt)
                    d = await direct_once(direct_backend, prompt)
                    if index >= warmup:
                        bridged.append(b)
                        direct.append(d)
                reader.cancel()
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
            await bridge_backend.aclose()
            await direct_backend.aclose()
            state.close()

    base = {"benchmark": "bridge_latency", "messages": messages, "prompt": prompt}
    lines = []
    for what, pairs in (("bridged", bridged), ("direct", direct)):
        for stage, at in (("first_delta", 0), ("completed", 1)):
            lines.append({**base, "path": what, "stage": stage, **_ms([p[at] for p in pairs])})
    added = {
        stage: _ms([b[at] - d[at] for b, d in zip(bridged, direct, strict=True)])
        for stage, at in (("first_delta", 0), ("completed", 1))
    }
    for stage, figures in added.items():
        lines.append({**base, "path": "added", "stage": stage, **figures})
    for line in lines:
        print(json.dumps(line))
    worst = max(figures["median_ms"] for figures in added.values())
    print(
        json.dumps(
            {
                **base,
                "summary": True,
                "flush_interval_ms": FLUSH_INTERVAL * 1000,
                "added_first_delta_median_ms": added["first_delta"]["median_ms"],
                "added_completed_median_ms": added["completed"]["median_ms"],
                "added_first_delta_p99_ms": added["first_delta"]["p99_ms"],
                "added_completed_p99_ms": added["completed"]["p99_ms"],
                "goal_ms": GOAL_MS,
                "meets_goal": worst < GOAL_MS,
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--prompt", default="talkie-test:echo The bridge carries this answer.")
    options = parser.parse_args()
    asyncio.run(main(options.messages, options.prompt, options.warmup))
