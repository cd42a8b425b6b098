"""The reference Cuckoo hub, person → agent → person on loopback (issue 13; goals: at least
1,000 messages per second, and p99 under 50 ms at 100 messages per second).

The hub runs in-process (its own thread, a temporary database, dev mode), so it shares the
interpreter lock with the load generator; `--hub process` runs it in a process of its own, as
`talkie serve --protocol cuckoo` would, to see the hub's figures apart. An agent backend
written here with `websockets` holds the agent socket: for every `message.created` it sends
`op: send` (text "re: …", `reply_to` the person's message) and then acknowledges the event.
Each person keeps a client socket open; a round trip ends when the agent's reply arrives there
as `message.created`. A person's POST goes through a small keep-alive HTTP/1.1 client (one
connection per sender), so the load generator, which shares the interpreter with the hub,
costs little next to it.

1. Paced: one person sends at a fixed rate (100 msg/s for 10 s by default, each send on
   schedule whatever the earlier ones do). Latency from the POST to the reply on the person's
   client socket: p50, p99, max; and its two legs (POST → event at the agent, event → reply).
2. Throughput: several persons (each paired with the agent by a code), several senders each,
   every sender waiting for its reply before the next (a bounded number in flight), for a
   fixed time. Round trips per second, the agent-side figure (events delivered to and acked
   by the backend per second), and the latency under that load.

The hub's rate limits (a person 0.5/s burst 30, an agent 60/s burst 120) would cap both runs
well under the goals, so the hub is started with `person_send_rate` and `agent_send_rate`
raised (printed as `rate_overrides`). CPU seconds of the hub's thread and of this process
(which, with `--hub thread`, includes the hub) are printed per phase. Everything is on
127.0.0.1, bounded in count and time; the figures are of one run on a machine that may be
busy with other work, so compare trees within one session, alternating.

The hub runs on httptools and uvloop, as it does by default; `--plain` runs it on h11 and
asyncio's loop to compare (the summary's `hub_speedups` says which).

Prints one JSON line per phase, then a summary line with the goals and whether they are met,
the CPU milliseconds per round trip of the hub and of this process, and the load average
before and after (other work on the machine shares the cores).

    .venv/bin/python benchmarks/cuckoo_hub.py [--rate 100] [--seconds 10] [--persons 4]
        [--senders 8] [--load-seconds 10] [--hub thread|process] [--plain]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from talkie_tui.core.waiting import wait_event
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.ids import new_id
from talkie_tui.devserver.cuckoo.runner import serve_in_thread

GOAL_THROUGHPUT = 1000.0  # round trips per second
GOAL_P99_MS = 50.0  # at the paced rate
GOAL_RATE = 100.0
RATE_OVERRIDE = (100_000.0, 100_000)
REPLY_TIMEOUT = 10.0
IDLE_REUSE = 2.0


def _pct(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ms(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50_ms": None, "p90_ms": None, "p99_ms": None, "max_ms": None}
    ordered = sorted(values)
    return {
        "p50_ms": round(_pct(ordered, 0.5) * 1000, 2),
        "p90_ms": round(_pct(ordered, 0.9) * 1000, 2),
        "p99_ms": round(_pct(ordered, 0.99) * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def _thread_cpu(where: tuple[int, int] | None) -> float:
    """CPU seconds of one thread (pid, native thread id) on Linux, or 0."""
    if where is None:
        return 0.0
    try:
        stat = Path(f"/proc/{where[0]}/task/{where[1]}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _hub_thread() -> tuple[int, int] | None:
    for thread in threading.enumerate():
        if thread.name == "talkie-devserver" and thread.native_id is not None:
            return os.getpid(), thread.native_id
    return None


def _hub_config(folder: str, speedups: bool) -> HubConfig:
    return HubConfig(
        dev=True,
        db_path=Path(folder) / "hub.sqlite3",
        person_send_rate=RATE_OVERRIDE,
        agent_send_rate=RATE_OVERRIDE,
        speedups=speedups,
    )


def _hub_child(folder: str, speedups: bool, pipe: Connection) -> None:
    """The hub in a process of its own (`--hub process`): its URL and thread, then wait."""
    with serve_in_thread(_hub_config(folder, speedups)) as url:
        pipe.send((url, _hub_thread()))
        pipe.recv()  # anything, or the parent gone: stop


@contextlib.contextmanager
def running_hub(
    folder: str, where: str, speedups: bool
) -> Iterator[tuple[str, tuple[int, int] | None]]:
    """The hub's URL and (pid, thread id): in a thread of this process, or in a child."""
    if where == "thread":
        with serve_in_thread(_hub_config(folder, speedups)) as url:
            yield url, _hub_thread()
        return
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_hub_child, args=(folder, speedups, child), daemon=True)
    process.start()
    try:
        if not parent.poll(30):
            raise RuntimeError("the hub process did not start")
        url, thread = parent.recv()
        yield url, thread
    finally:
        with contextlib.suppress(OSError):
            parent.send("stop")
        process.join(15)
        if process.is_alive():
            process.kill()


class Poster:
    """One keep-alive HTTP/1.1 connection that POSTs JSON and reads the answer."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._used = 0.0

    async def post(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> int:
        """POST and return the status (the body is read and dropped).

        The server closes a connection idle for 5 s (uvicorn's keep-alive): one idle for 2 s
        is not reused.
        """
        now = time.monotonic()
        if self._writer is not None and now - self._used > IDLE_REUSE:
            await self.close()
        self._used = now
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        payload = json.dumps(body).encode()
        head = [
            f"POST {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Content-Type: application/json",
            f"Content-Length: {len(payload)}",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        self._writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
        status_line = await self._reader.readline()
        if not status_line:
            raise ConnectionError("the hub closed the connection")
        length = 0
        while True:
            line = await self._reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if length:
            await self._reader.readexactly(length)
        return int(status_line.split()[1])

    async def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


@dataclass
class Trip:
    """One message's round trip, in perf_counter seconds."""

    posted: float
    status: int | None = None
    at_agent: float | None = None
    replied: float | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Ledger:
    """Every message in flight by its text, and what the agent did."""

    trips: dict[str, Trip] = field(default_factory=dict)
    events: list[float] = field(default_factory=list)  # when the backend acked an event
    delivered: list[float] = field(default_factory=list)  # `delivery.updated` delivered
    send_errors: int = 0


class AgentBackend:
    """The agent's socket: answer each message with `op: send`, then acknowledge the event."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.ready = asyncio.Event()
        self._cid = 0

    async def run(self, socket: ClientConnection) -> None:
        self.ready.set()
        async for raw in socket:
            frame = json.loads(raw)
            event_id = frame.get("id")
            if isinstance(event_id, str) and "type" in frame:
                out = []
                message = (frame.get("data") or {}).get("message")
                if frame["type"] == "message.created" and message:
                    text = message["body"].get("text", "")
                    trip = self.ledger.trips.get(text)
                    if trip is not None and trip.at_agent is None:
                        trip.at_agent = time.perf_counter()
                    self._cid += 1
                    out.append(
                        {
                            "op": "send",
                            "cid": f"c{self._cid}",
                            "conversation_id": frame["data"]["conversation"]["id"],
                            "text": "re: " + text,
                            "reply_to": message["id"],
                        }
                    )
                out.append({"ack": event_id})
                for item in out:
                    await socket.send(json.dumps(item, separators=(",", ":")))
                self.ledger.events.append(time.perf_counter())
            elif frame.get("ok") is False:
                self.ledger.send_errors += 1


async def watch_person(socket: ClientConnection, ledger: Ledger) -> None:
    """A person's client socket: the agent's replies end round trips."""
    async for raw in socket:
        frame = json.loads(raw)
        kind = frame.get("type")
        data = frame.get("data") or {}
        if kind == "message.created" and data["message"]["sender"]["kind"] == "agent":
            text = data["message"]["body"].get("text", "")
            trip = ledger.trips.get(text.removeprefix("re: "))
            if trip is not None and trip.replied is None:
                trip.replied = time.perf_counter()
                trip.done.set()
        elif kind == "delivery.updated" and data.get("delivery_status") == "delivered":
            ledger.delivered.append(time.perf_counter())


@dataclass
class Person:
    user_id: str
    conversation_id: str

    @property
    def path(self) -> str:
        return f"/v1/client/conversations/{self.conversation_id}/messages"

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Dev-User": self.user_id}


async def setup(http: httpx.AsyncClient, persons: int) -> tuple[str, list[Person]]:
    """An agent owned by the first person, with a socket binding; the others pair by a code."""
    owner = new_id("usr")
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
    people = [Person(owner, dm)]
    token = await http.post(
        f"/v1/mgmt/agents/{agent_id}/pair-tokens", headers=headers, json={"max_uses": 1000}
    )
    token.raise_for_status()
    code = token.json()["code"]
    for _ in range(persons - 1):
        user = new_id("usr")
        accepted = await http.post(
            f"/v1/client/pair/{code}/accept", headers={"X-Dev-User": user}, json={}
        )
        accepted.raise_for_status()
        people.append(Person(user, accepted.json()["conversation"]["id"]))
    return bound.json()["secret"], people


async def one_trip(poster: Poster, person: Person, ledger: Ledger, text: str) -> Trip:
    trip = Trip(posted=time.perf_counter())
    ledger.trips[text] = trip
    try:
        async with asyncio.timeout(REPLY_TIMEOUT):
            trip.status = await poster.post(person.path, person.headers, {"text": text})
    except (ConnectionError, OSError, asyncio.IncompleteReadError, TimeoutError):
        await poster.close()  # counted as refused (no status) and lost
        return trip
    if trip.status in (200, 201):
        await wait_event(trip.done, REPLY_TIMEOUT)
    return trip


def _legs(trips: list[Trip]) -> dict[str, Any]:
    ok = [t for t in trips if t.replied is not None]
    return {
        "sent": len(trips),
        "answered": len(ok),
        "lost": len(trips) - len(ok),
        "refused": sum(1 for t in trips if t.status not in (200, 201)),
        "round_trip": _ms([t.replied - t.posted for t in ok if t.replied is not None]),
        "to_agent": _ms([t.at_agent - t.posted for t in ok if t.at_agent is not None]),
        "agent_to_person": _ms(
            [t.replied - t.at_agent for t in ok if t.replied is not None and t.at_agent]
        ),
    }


async def paced(base_url: str, person: Person, ledger: Ledger, rate: float, seconds: float) -> Any:
    """Open loop: message i goes at t0 + i / rate on a free connection."""
    count = max(1, round(rate * seconds))
    idle: list[Poster] = []
    posters: list[Poster] = []

    async def send(index: int) -> Trip:
        poster = idle.pop() if idle else Poster(base_url)
        if poster not in posters:
            posters.append(poster)
        try:
            return await one_trip(poster, person, ledger, f"paced {index}")
        finally:
            idle.append(poster)

    # Warm the connection and the hub's caches.
    for index in range(5):
        await send(-1 - index)
    tasks = []
    started = time.perf_counter()
    for index in range(count):
        delay = started + index / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(send(index)))
    trips = await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    for poster in posters:
        await poster.close()
    return trips, elapsed, len(posters)


async def load(
    base_url: str, people: list[Person], ledger: Ledger, senders: int, seconds: float
) -> Any:
    """Closed loop: every sender waits for its reply, then sends the next, until time is up."""
    trips: list[Trip] = []
    stop_at = time.perf_counter() + seconds

    async def sender(person: Person, number: int) -> None:
        poster = Poster(base_url)
        index = 0
        try:
            while time.perf_counter() < stop_at:
                trip = await one_trip(poster, person, ledger, f"load {number} {index}")
                trips.append(trip)
                index += 1
                if trip.replied is None:
                    return  # refused or lost: stop this sender, the figures say so
        finally:
            await poster.close()

    started = time.perf_counter()
    await asyncio.gather(
        *(sender(person, n * 1000 + s) for n, person in enumerate(people) for s in range(senders))
    )
    return trips, started, time.perf_counter()


def _rate_in(times: list[float], start: float, end: float) -> float:
    if end <= start:
        return 0.0
    return round(sum(1 for t in times if start <= t <= end) / (end - start), 1)


async def main(options: argparse.Namespace) -> None:
    base = {"benchmark": "cuckoo_hub"}
    lines: list[dict[str, Any]] = []
    load_before = [round(value, 2) for value in os.getloadavg()]
    with (
        tempfile.TemporaryDirectory() as folder,
        running_hub(folder, options.hub, not options.plain) as (url, hub_thread),
    ):
        ws_base = "ws://" + url.removeprefix("http://")
        async with httpx.AsyncClient(base_url=url, timeout=30, trust_env=False) as http:
            secret, people = await setup(http, options.persons)
        ledger = Ledger()
        backend = AgentBackend(ledger)
        async with contextlib.AsyncExitStack() as stack:
            agent_ws = await stack.enter_async_context(
                connect(
                    ws_base + "/v1/agent/socket",
                    additional_headers={"Authorization": f"Bearer {secret}"},
                    proxy=None,
                    max_queue=None,
                )
            )
            watchers = []
            for person in people:
                ws = await stack.enter_async_context(
                    connect(
                        ws_base + "/v1/client/socket",
                        additional_headers=person.headers,
                        proxy=None,
                        max_queue=None,
                    )
                )
                watchers.append(asyncio.ensure_future(watch_person(ws, ledger)))
            running = asyncio.ensure_future(backend.run(agent_ws))
            if not await wait_event(backend.ready, 10):
                raise RuntimeError("the agent backend did not start")

            # 1. paced
            cpu0, hub0 = time.process_time(), _thread_cpu(hub_thread)
            trips, elapsed, connections = await paced(
                url, people[0], ledger, options.rate, options.seconds
            )
            cpu1, hub1 = time.process_time(), _thread_cpu(hub_thread)
            paced_line = {
                **base,
                "phase": "paced",
                "rate_per_s": options.rate,
                "seconds": round(elapsed, 2),
                "connections": connections,
                **_legs(trips),
                "hub_cpu_s": round(hub1 - hub0, 2),
                "process_cpu_s": round(cpu1 - cpu0, 2),
            }
            lines.append(paced_line)
            print(json.dumps(paced_line), flush=True)

            # 2. throughput
            await asyncio.sleep(0.5)
            events_before = len(ledger.events)
            cpu0, hub0 = time.process_time(), _thread_cpu(hub_thread)
            trips, started, ended = await load(
                url, people, ledger, options.senders, options.load_seconds
            )
            cpu1, hub1 = time.process_time(), _thread_cpu(hub_thread)
            elapsed = ended - started
            answered = [t for t in trips if t.replied is not None]
            # Steady state: the window in which every sender was still sending.
            window_end = started + options.load_seconds
            load_line = {
                **base,
                "phase": "throughput",
                "persons": len(people),
                "senders_per_person": options.senders,
                "in_flight": len(people) * options.senders,
                "seconds": round(elapsed, 2),
                **_legs(trips),
                "round_trips_per_s": _rate_in(
                    [t.replied for t in answered if t.replied is not None],
                    started,
                    window_end,
                ),
                "agent_events_acked_per_s": _rate_in(
                    ledger.events[events_before:], started, window_end
                ),
                "deliveries_confirmed_per_s": _rate_in(ledger.delivered, started, window_end),
                "hub_cpu_s": round(hub1 - hub0, 2),
                "process_cpu_s": round(cpu1 - cpu0, 2),
                "hub_cpu_ms_per_round_trip": (
                    round((hub1 - hub0) * 1000 / len(answered), 3) if answered else None
                ),
            }
            lines.append(load_line)
            print(json.dumps(load_line), flush=True)

            running.cancel()
            for watcher in watchers:
                watcher.cancel()
            await asyncio.gather(running, *watchers, return_exceptions=True)

    p99 = paced_line["round_trip"]["p99_ms"]
    throughput = load_line["round_trips_per_s"]
    summary = {
        **base,
        "summary": True,
        "rate_overrides": {
            "person_send_rate": list(RATE_OVERRIDE),
            "agent_send_rate": list(RATE_OVERRIDE),
        },
        "paced_rate_per_s": options.rate,
        "paced_p50_ms": paced_line["round_trip"]["p50_ms"],
        "paced_p99_ms": p99,
        "paced_max_ms": paced_line["round_trip"]["max_ms"],
        "paced_lost": paced_line["lost"],
        "round_trips_per_s": throughput,
        "agent_events_acked_per_s": load_line["agent_events_acked_per_s"],
        "load_p50_ms": load_line["round_trip"]["p50_ms"],
        "load_p99_ms": load_line["round_trip"]["p99_ms"],
        "goal_p99_ms": GOAL_P99_MS,
        "goal_round_trips_per_s": GOAL_THROUGHPUT,
        "meets_latency_goal": p99 is not None
        and p99 < GOAL_P99_MS
        and options.rate >= GOAL_RATE
        and paced_line["lost"] == 0,
        "meets_throughput_goal": throughput >= GOAL_THROUGHPUT and load_line["lost"] == 0,
        "hub_cpu_ms_per_round_trip": load_line["hub_cpu_ms_per_round_trip"],
        # This process: the persons and the agent backend (and the hub too with --hub thread).
        "process_cpu_ms_per_round_trip": (
            round(load_line["process_cpu_s"] * 1000 / load_line["answered"], 3)
            if load_line["answered"]
            else None
        ),
        "hub_in": options.hub,
        "hub_speedups": not options.plain,
        "cpus": os.cpu_count(),
        # Other work on the machine takes cores from the hub and the load generator alike.
        "load_average_before": load_before,
        "load_average_after": [round(value, 2) for value in os.getloadavg()],
    }
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=GOAL_RATE, help="paced messages per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="paced run length")
    parser.add_argument("--persons", type=int, default=4, help="persons in the throughput run")
    parser.add_argument("--senders", type=int, default=8, help="concurrent senders per person")
    parser.add_argument("--load-seconds", type=float, default=10.0, help="throughput run length")
    parser.add_argument(
        "--hub",
        choices=("thread", "process"),
        default="thread",
        help="the hub in a thread of this process (sharing its interpreter), or its own process",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="the hub on h11 and asyncio's loop instead of httptools and uvloop (to compare)",
    )
    asyncio.run(main(parser.parse_args()))
