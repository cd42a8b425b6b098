"""Streaming a long Markdown answer in a real terminal: the client's CPU, frames and lag.

What a person sees, measured from outside: the reference server (its own process, test mode)
streams a seeded Markdown answer (`talkie-test:markdown`: headings, nested lists, bold, code
blocks; its digest is printed) at a fixed rate of tokens per second, or as fast as the socket
allows (rate 0). The real `talkie connect URL --token T` runs in tmux at 120x40 with
TERM=tmux-256color in a minimal environment (an empty TALKIE_HOME); the prompt is typed through
tmux. Every 50 ms the client's CPU (utime + stime from /proc/PID/stat) and RSS are sampled until
the answer's last line was drawn and the client is idle; `tmux capture-pane` then checks that
the last screen shows the end of the answer.

Frames are timed at the terminal: tmux `pipe-pane` copies everything the client writes to a FIFO
read here, each chunk stamped on arrival. Textual writes a frame in one write, so writes closer
than FRAME_JOIN apart are one frame. The lag is from the last token (the server's timestamp of
that event, read back from the server's database afterwards) to the frame in which the answer's
last line first appears whole. Key-to-screen latency: keys are sent through a tmux control
client while an answer streams, and each counts as shown when the composer's run of typed `|`
(a character the answer never contains) reaches its new length in the client's output.

In the same run the same streams go to a ~60-line stock Textual client
(benchmarks/stock_client.py: one `Markdown` widget fed by `MarkdownStream`), and the ratios are
printed. Figures are JSON lines; compare them as ratios within one run (the machine is shared).

The other stream paths (`--protocols talkie minara cuckoo`, default talkie only; `--protocol`
is the same option): the same answer reaches the same rendering through each backend, and each
JSON line says its `protocol`. Every server process is on 127.0.0.1 with its own folder.

- talkie: the reference Talkie server as above; `talkie connect URL --token T`.
- minara: the reference Minara gateway in its own process (test mode, `GATEWAY_AUTH_TOKEN` T,
  no demo agent); `talkie connect URL --token T --protocol minara`, sent
  `minara-test:markdown TOKENS RATE SEED` (the same text, a token per `text_delta`). The
  gateway stamps no event, so the token times are its stored rows' (millisecond ISO times): the
  last token's is the assistant row's `created_at`, stored in the same event-loop step as the
  last delta (before `done`); the first token's is the user row's, stored as the turn request
  is taken, a loop step or two before the first delta is due (the turn starts right after).
- cuckoo: the stack of `talkie demo --protocol cuckoo` (`commands.demo_cuckoo.cuckoo_demo`: the
  Talkie server in test mode, a development hub, the demo person signed in, the agent bound to
  the bridge) in its own process, which prints the hub's URL and the person's session token;
  `talkie connect HUB --token SESSION --protocol cuckoo` opens the person's conversation with
  the agent and is sent `talkie-test:markdown …`. The answer comes from the Talkie server
  behind the bridge, so the token times are read from that server's database as for talkie;
  the lag includes the bridge (deltas batched every 40 ms) and the hub. A reply goes on in a
  new message at a paragraph break past 6,000 characters (bridge/split.py), so a 10,000-token
  answer is seven messages; the end line is in the last. The hub allows 8,000 characters, so the
  composer's counter, the ready mark, reads "0 / 8,000".

The stock client speaks talkie/1 only: it runs on the talkie path. The typing measurement runs
on every protocol asked for. The summary's goals are the talkie path's; for another protocol P
it adds `P_over_talkie_cpu_TOKENS_at_RATE` and P's figures and goals under `P_` names.
`--screens DIR` keeps each run's last screen as text, `--profile DIR` py-spy's samples.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from talkie_tui.devserver.common.long_answer import digest, end_line, long_answer

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TOKEN = "bench-token"
SEED = 7
WIDTH, HEIGHT = 120, 40
SAMPLE = 0.05
FRAME_JOIN = 0.004
IDLE_WINDOW = 1.0
IDLE_TICKS = 2
KEY = "|"
KEY_INTERVAL = 0.15
KEYS = 60
PROTOCOLS = ("talkie", "minara", "cuckoo")
READY = {"talkie": "0 / 4,000", "minara": "0 / 4,000", "cuckoo": "0 / 8,000"}
"""What a talkie client shows once it is up: its composer's empty counter (the message limit)."""
TEST_PREFIX = {"talkie": "talkie-test:", "minara": "minara-test:", "cuckoo": "talkie-test:"}
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
GOALS = {
    "cpu_ms_per_token_10000_at_500": 0.35,
    "growth_10000_over_1000_at_500": 1.2,
    "lag_s": 0.25,
    "frames_per_s": 20,
    "max_gap_ms": 100,
    "cpu_ms_per_token_at_2000": 0.15,
    "key_p95_ms": 30,
}
SERVER = """
import sys
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import run_forever
config = ServerConfig(test_mode=True, dev_token=sys.argv[1], db_path=sys.argv[2],
                      demo_agent=False, ping_interval=15)
run_forever(config, on_ready=lambda url: print(url, flush=True))
"""
GATEWAY = """
import sys
from pathlib import Path
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import run_forever
config = GatewayConfig(test_mode=True, auth_token=sys.argv[1], db_path=Path(sys.argv[2]),
                       demo_agent=False)
run_forever(config, on_ready=lambda url: print(url, flush=True))
"""
CUCKOO = """
import signal, sys, threading
from pathlib import Path
from talkie_tui.commands.demo_cuckoo import cuckoo_demo
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with cuckoo_demo(Path(sys.argv[1])) as demo:
    print(demo.hub_url, demo.session_token, flush=True)
    threading.Event().wait()
"""
TMUX_CONF = """
set -g status off
set -g default-terminal tmux-256color
set -g escape-time 0
set -g history-limit 0
"""


@contextlib.contextmanager
def _process(script: str, *args: str) -> Iterator[list[str]]:
    """A Python script in its own process; the words of the first line it prints (its URL…)."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        words = process.stdout.readline().split()
        if not words or not words[0].startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the server did not start: {words!r}")
        yield words
    finally:
        process.terminate()
        process.wait(30)


@contextlib.contextmanager
def server(workdir: Path) -> Iterator[tuple[str, Path]]:
    """A fresh reference server on 127.0.0.1 (its own process and database)."""
    db = workdir / "server.sqlite3"
    with _process(SERVER, TOKEN, str(db)) as (url, *_):
        yield url, db


@dataclass
class Stack:
    """What streams the answer to a client of one protocol."""

    protocol: str
    url: str
    token: str = field(repr=False)
    times: Callable[[], tuple[float, float] | None]
    """The first and last token's wall-clock times (None before the answer ended)."""


@contextlib.contextmanager
def stack(protocol: str, workdir: Path) -> Iterator[Stack]:
    """The servers of one protocol's stream path, fresh, on 127.0.0.1 (see the docstring)."""
    if protocol == "talkie":
        with server(workdir) as (url, db):
            yield Stack(protocol, url, TOKEN, lambda: token_times(db))
    elif protocol == "minara":
        db = workdir / "gateway.sqlite3"
        with _process(GATEWAY, TOKEN, str(db)) as (url, *_):
            yield Stack(protocol, url, TOKEN, lambda: gateway_times(db))
    elif protocol == "cuckoo":
        folder = workdir / "cuckoo"
        folder.mkdir()
        with _process(CUCKOO, str(folder)) as (url, session, *_):
            yield Stack(protocol, url, session, lambda: token_times(folder / "demo.db"))
    else:
        raise ValueError(f"unknown protocol {protocol!r}")


def token_times(db: Path) -> tuple[float, float] | None:
    """Wall-clock times (s) of the first and last streamed token, as the server stamped them
    (None before the run has finished)."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        row = connection.execute(
            "SELECT frames FROM runs WHERE status = 'finished' ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
    stamps = [
        event["timestamp"] / 1000
        for event in map(json.loads, json.loads(row[0]) if row else [])
        if event["type"] == "TEXT_MESSAGE_CONTENT"
    ]
    return (stamps[0], stamps[-1]) if stamps else None


def gateway_times(db: Path) -> tuple[float, float] | None:
    """The Minara gateway's stand-ins for the first and last token's times (s): the stored times
    of the last user row and of the assistant row after it (None before the turn ended)."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT role, created_at FROM messages ORDER BY seq DESC LIMIT 2"
        ).fetchall()
    if [role for role, _ in rows] != ["assistant", "user"]:
        return None
    answered, asked = (_epoch(stamp) for _, stamp in rows)
    return asked, answered


def _epoch(stamp: str) -> float:
    """A wire timestamp (`2026-10-22T10:00:00.123Z`) as seconds since the epoch."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class PaneOutput:
    """Everything the pane's program writes, in chunks stamped as they arrive (pipe-pane)."""

    def __init__(self, fifo: Path) -> None:
        self.chunks: list[tuple[float, bytes]] = []
        self._fifo = fifo
        self._searches: dict[bytes, tuple[int, bytes]] = {}
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        with self._fifo.open("rb", buffering=0) as source:
            while chunk := source.read(65536):
                self.chunks.append((time.time(), chunk))

    def mark(self) -> int:
        """A position to search from later."""
        return len(self.chunks)

    def find(self, needle: bytes, start: int) -> float | None:
        """When `needle` first appeared whole in the output after chunk `start` (searching on
        from where the last call with the same needle stopped)."""
        position, tail = self._searches.get(needle, (start, b""))
        while position < len(self.chunks):
            stamp, chunk = self.chunks[position]
            joined = tail + chunk
            if needle in joined:
                return stamp
            tail = joined[-len(needle) :]
            position += 1
        self._searches[needle] = (position, tail)
        return None

    def frames(self) -> list[tuple[float, int]]:
        """Writes joined into frames: (time of the frame's first chunk, bytes)."""
        frames: list[tuple[float, int]] = []
        last = -1.0
        for stamp, chunk in self.chunks:
            if frames and stamp - last < FRAME_JOIN:
                frames[-1] = (frames[-1][0], frames[-1][1] + len(chunk))
            else:
                frames.append((stamp, len(chunk)))
            last = stamp
        return frames


class Terminal:
    """One tmux server (own socket and config) running one client at WIDTHxHEIGHT."""

    def __init__(self, workdir: Path, command: list[str], home: Path | None = None) -> None:
        self.socket = f"talkie-bench-{os.getpid()}-{workdir.name}"
        conf = workdir / "tmux.conf"
        conf.write_text(TMUX_CONF)
        if home is None:  # an empty TALKIE_HOME of its own; given: one kept between runs
            home = workdir / "home"
            home.mkdir()
        env = [
            f"HOME={home}",
            f"TALKIE_HOME={home}",
            "TERM=tmux-256color",
            "PATH=/usr/bin:/bin",
            "LANG=C.UTF-8",
        ]
        shell = " ".join(["exec", "env", "-i", *env, *map(_quote, command)])
        fifo = workdir / "pane.fifo"
        os.mkfifo(fifo)
        # The pane starts idle, is piped to the FIFO, and only then runs the client.
        self._tmux("-f", str(conf), "new-session", "-d", "-s", "bench", "-x", str(WIDTH))
        self.output = PaneOutput(fifo)
        self._tmux("pipe-pane", "-O", "-t", "bench", f"exec cat > {_quote(str(fifo))}")
        self.started = time.perf_counter()
        """When the client was started (just before tmux execs it)."""
        self._tmux("respawn-pane", "-k", "-t", "bench", shell)
        self.pid = int(self._tmux("display-message", "-p", "-t", "bench", "#{pane_pid}"))
        self._control: subprocess.Popen[str] | None = None

    def _tmux(self, *args: str) -> str:
        if "new-session" in args:
            args = (*args, "-y", str(HEIGHT), "sleep 600")
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    def screen(self) -> str:
        """The visible screen as text."""
        return self._tmux("capture-pane", "-p", "-t", "bench")

    def size(self) -> str:
        """The pane's size as WxH."""
        return self._tmux("display-message", "-p", "-t", "bench", "#{pane_width}x#{pane_height}")

    def type(self, text: str) -> None:
        """Type literal text (one tmux command)."""
        self._tmux("send-keys", "-t", "bench", "-l", text)

    def press(self, key: str) -> None:
        """Press a named key."""
        self._tmux("send-keys", "-t", "bench", key)

    def control_send(self, text: str) -> float:
        """Type `text` through a control client (no process start per key); the send time."""
        if self._control is None:
            self._control = subprocess.Popen(
                ["tmux", "-L", self.socket, "-C", "attach", "-t", "bench"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                text=True,
            )
            assert self._control.stdin is not None
            self._control.stdin.write("refresh-client -f no-output\n")
            self._control.stdin.flush()
            time.sleep(0.3)
        assert self._control.stdin is not None
        sent = time.time()
        self._control.stdin.write(f"send-keys -t bench -l '{text}'\n")
        self._control.stdin.flush()
        return sent

    def close(self) -> None:
        """Stop the client and the tmux server."""
        if self._control is not None and self._control.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self._control.stdin.close()
            self._control.wait(5)
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU seconds of a process (all threads)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def cpu_rss(pid: int) -> tuple[float, int]:
    """CPU seconds (all threads, user + system) and resident bytes of a process."""
    with open(f"/proc/{pid}/statm") as statm:
        rss = int(statm.read().split()[1]) * PAGE
    return sum(cpu_times(pid)), rss


@dataclass
class Samples:
    """(wall time, CPU s, RSS bytes) every SAMPLE seconds."""

    rows: list[tuple[float, float, int]] = field(default_factory=list)

    def take(self, pid: int) -> None:
        cpu, rss = cpu_rss(pid)
        self.rows.append((time.time(), cpu, rss))

    def cpu_at(self, when: float) -> float:
        """CPU at the last sample not after `when`."""
        before = [cpu for stamp, cpu, _ in self.rows if stamp <= when]
        return before[-1] if before else self.rows[0][1]

    def idle(self) -> bool:
        """No more than IDLE_TICKS clock ticks of CPU in the last IDLE_WINDOW seconds."""
        now = self.rows[-1][0]
        window = [cpu for stamp, cpu, _ in self.rows if stamp >= now - IDLE_WINDOW]
        span = self.rows[-1][0] - self.rows[0][0]
        return span >= IDLE_WINDOW and window[-1] - window[0] <= IDLE_TICKS / CLK_TCK


VARIANTS: dict[str, str] = {}
"""Other talkie_tui trees to run as clients `talkie@NAME` (before/after in one run)."""

PROFILE_DIR: Path | None = None
"""Where py-spy's samples of each talkie client's stream go (`--profile`), or None."""

SCREENS_DIR: Path | None = None
"""Where the last screen of each run goes as text (`--screens`), or None."""


def start_profile(pid: int, name: str, seconds: float) -> subprocess.Popen[bytes] | None:
    """Sample the client with py-spy for `seconds` (collapsed stacks in PROFILE_DIR), if asked."""
    spy = shutil.which("py-spy")
    if PROFILE_DIR is None or spy is None:
        return None
    PROFILE_DIR.mkdir(parents=True, exist_ok=True)
    command = [spy, "record", "--pid", str(pid), "--rate", "200", "--format", "raw"]
    command += ["--nonblocking", "--duration", str(round(seconds) + 1)]
    command += ["--output", str(PROFILE_DIR / f"{name}.txt")]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def client_command(
    client: str, url: str, token: str = TOKEN, protocol: str = "talkie"
) -> list[str]:
    """The command line of a client (the stock one speaks talkie/1 only)."""
    if client.startswith("talkie@"):
        tree = VARIANTS[client.removeprefix("talkie@")]
        inner = client_command("talkie", url, token, protocol)
        return ["/usr/bin/env", f"PYTHONPATH={tree}", *inner]
    if client == "talkie":
        command = [str(BIN / "talkie"), "connect", url, "--token", token]
        return command if protocol == "talkie" else [*command, "--protocol", protocol]
    assert protocol == "talkie", "the stock client speaks talkie/1 only"
    return [sys.executable, str(ROOT / "benchmarks" / "stock_client.py"), url, token]


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    """Poll until `predicate()` is true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.1)


def measure(
    client: str, tokens: int, rate: int, *, keys: bool = False, protocol: str = "talkie"
) -> dict[str, Any]:
    """One client streaming one answer over one protocol's path; the figures of that run."""
    answer = long_answer(tokens, SEED)
    last_line = end_line(SEED)
    workdir = Path(tempfile.mkdtemp(prefix="talkie-tstream-"))
    try:
        with stack(protocol, workdir) as served:
            command = client_command(client, served.url, served.token, protocol)
            terminal = Terminal(workdir, command)
            try:
                return _measure(terminal, served, client, tokens, rate, answer, last_line, keys)
            finally:
                terminal.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _measure(
    terminal: Terminal,
    served: Stack,
    client: str,
    tokens: int,
    rate: int,
    answer: str,
    last_line: str,
    keys: bool,
) -> dict[str, Any]:
    protocol = served.protocol
    ready = READY[protocol] if client.startswith("talkie") else "Message"
    wait_for(lambda: ready in terminal.screen(), 30, f"{client} ({protocol}) did not start")
    samples = Samples()
    # Settle: the client's start-up work (status, thread list) is not the stream's.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        samples.take(terminal.pid)
        if samples.idle():
            break
        time.sleep(SAMPLE)
    size = terminal.size()
    terminal.type(f"{TEST_PREFIX[protocol]}markdown {tokens} {rate} {SEED}")
    time.sleep(0.3)
    samples = Samples()
    samples.take(terminal.pid)
    system_before = cpu_times(terminal.pid)[1]
    start = terminal.output.mark()
    expected = tokens / rate if rate else 5.0
    name = client if protocol == "talkie" else f"{client}-{protocol}"
    profile = start_profile(terminal.pid, f"{name}-{tokens}-{rate}", expected)
    terminal.press("Enter")
    sent = time.time()
    needle = last_line.encode()
    shown: float | None = None
    key_sends: list[float] = []
    next_key = sent + 3.0
    deadline = time.monotonic() + expected + 240
    while time.monotonic() < deadline:
        samples.take(terminal.pid)
        if keys and shown is None and len(key_sends) < KEYS and time.time() >= next_key:
            key_sends.append(terminal.control_send(KEY))
            next_key += KEY_INTERVAL
        if shown is None:
            shown = terminal.output.find(needle, start)
            if shown is None and time.time() > sent + expected + 60 and served.times() is None:
                break  # the run never finished: reported below
        elif samples.idle() and samples.rows[-1][0] - shown >= IDLE_WINDOW:
            break
        time.sleep(SAMPLE if not keys else 0.01)
    system = cpu_times(terminal.pid)[1] - system_before
    if profile is not None:
        profile.wait(60)
    screen = terminal.screen()
    if SCREENS_DIR is not None:
        SCREENS_DIR.mkdir(parents=True, exist_ok=True)
        (SCREENS_DIR / f"{name}-{tokens}-{rate}{'-keys' if keys else ''}.txt").write_text(screen)
    times = served.times()
    if times is None:
        raise RuntimeError(f"{client} ({protocol}): the run did not finish; the screen:\n{screen}")
    first_token, last_token = times
    end = shown if shown is not None else samples.rows[-1][0]
    cpu_total = samples.cpu_at(end + 0.1) - samples.rows[0][1]
    streaming_cpu = samples.cpu_at(last_token) - samples.cpu_at(first_token)
    frames = terminal.output.frames()
    during = [stamp for stamp, _ in frames if first_token <= stamp <= last_token]
    edges = [first_token, *during, last_token]
    gaps = [b - a for a, b in itertools.pairwise(edges)]
    big = [stamp for stamp, size in frames if size >= 512 and stamp >= last_token]
    record: dict[str, Any] = {
        "client": client,
        "protocol": protocol,
        "tokens": tokens,
        "rate_tokens_per_s": rate,
        "answer_digest": digest(answer),
        "pane": size,
        "cpu_ms_per_token": cpu_total * 1000 / tokens,
        "cpu_s": cpu_total,
        "system_share": system / cpu_total if cpu_total else None,
        "stream_s": last_token - first_token,
        "core_share_streaming": (
            streaming_cpu / (last_token - first_token) if last_token - first_token > 0.5 else None
        ),
        "lag_s": shown - last_token if shown is not None else None,
        "settle_s": big[-1] - last_token if big else None,
        "frames_per_s": (
            len(during) / (last_token - first_token) if last_token - first_token > 0.5 else None
        ),
        "max_gap_ms": max(gaps) * 1000 if rate and gaps else None,
        "gaps_over_100ms": sum(gap > 0.1 for gap in gaps) if rate else None,
        "bytes_written": sum(len(chunk) for _, chunk in terminal.output.chunks[start:]),
        "rss_mb_peak": max(rss for _, _, rss in samples.rows) / 2**20,
        "rss_mb_end": samples.rows[-1][2] / 2**20,
        "end_shown": shown is not None and last_line in screen,
        "screen_digest": digest(_answer_area(screen)),
    }
    if keys:
        record.update(_key_latencies(terminal.output, key_sends, start))
    return record


def _answer_area(screen: str) -> str:
    """The screen without what changes from run to run (the header's usage, ages)."""
    lines = screen.splitlines()[1:]
    return "\n".join(re.sub(r"\b(now|\d+ ?[smh]( ago)?)\b", "", line) for line in lines)


def _key_latencies(output: PaneOutput, sends: list[float], start: int) -> dict[str, Any]:
    """Send-to-screen time of each key: the run of KEY reaching its new length."""
    latencies = []
    chunks = output.chunks[start:]
    for count, sent in enumerate(sends, start=1):
        pattern = re.compile(
            b"(?<!%s)%s(?!%s)"
            % (re.escape(KEY).encode(), re.escape(KEY * count).encode(), re.escape(KEY).encode())
        )
        shown = next(
            (stamp for stamp, chunk in chunks if stamp >= sent and pattern.search(chunk)), None
        )
        if shown is not None:
            latencies.append((shown - sent) * 1000)
    latencies.sort()
    return {
        "keys_sent": len(sends),
        "keys_shown": len(latencies),
        "key_p50_ms": _percentile(latencies, 0.5),
        "key_p95_ms": _percentile(latencies, 0.95),
        "key_max_ms": latencies[-1] if latencies else None,
    }


def _percentile(ordered: list[float], fraction: float) -> float | None:
    return ordered[round(fraction * (len(ordered) - 1))] if ordered else None


def _rounded(record: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in record.items()}


def median_record(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of each figure over repeats (other fields from the first)."""
    merged = dict(records[0])
    for key, value in records[0].items():
        if key in {"tokens", "rate_tokens_per_s"}:
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            values = [r[key] for r in records if r.get(key) is not None]
            merged[key] = statistics.median(values) if values else None
    merged["repeats"] = len(records)
    merged["end_shown"] = all(r["end_shown"] for r in records)
    return merged


def main() -> None:
    """Parse options, run every case, print JSON lines and a summary."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 tokens, rates 500 and 0")
    parser.add_argument("--tokens", type=int, nargs="*", help="answer lengths (default 1000 10000)")
    parser.add_argument("--rates", type=int, nargs="*", help="tokens/s, 0 unpaced (500 2000 0)")
    parser.add_argument("--clients", nargs="*", default=["talkie", "stock"])
    parser.add_argument(
        "--protocols",
        "--protocol",
        nargs="+",
        choices=PROTOCOLS,
        default=["talkie"],
        metavar="P",
        help="stream paths: talkie, minara, cuckoo (default talkie; stock runs on talkie only)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (medians printed)")
    parser.add_argument("--no-keys", action="store_true", help="skip the typing measurement")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="also run DIR/talkie_tui as client talkie@NAME (add it to --clients)",
    )
    parser.add_argument(
        "--profile", type=Path, metavar="DIR", help="sample talkie clients with py-spy into DIR"
    )
    parser.add_argument(
        "--screens", type=Path, metavar="DIR", help="keep each run's last screen as text in DIR"
    )
    args = parser.parse_args()
    global PROFILE_DIR, SCREENS_DIR
    PROFILE_DIR, SCREENS_DIR = args.profile, args.screens
    for variant in args.variant:
        name, _, tree = variant.partition("=")
        VARIANTS[name] = tree
    if shutil.which("tmux") is None:
        print(json.dumps({"skipped": "terminal_stream", "missing": "tmux"}))
        return
    sizes = args.tokens or ([1000] if args.quick else [1000, 10_000])
    rates = args.rates if args.rates is not None else ([500, 0] if args.quick else [500, 2000, 0])
    protocols = list(dict.fromkeys(args.protocols))
    cases = [
        (protocol, client)
        for protocol in protocols
        for client in args.clients
        if protocol == "talkie" or client.startswith("talkie")
    ]
    for protocol, client in itertools.product(protocols, args.clients):
        if (protocol, client) not in cases:
            print(json.dumps({"skipped": client, "protocol": protocol, "speaks": "talkie"}))
    results: dict[tuple[str, str, int, int], dict[str, Any]] = {}
    for tokens in sizes:
        for rate in rates:
            # Clients (and paths) take turns within each repeat, so a change in the machine's
            # load falls on all of them.
            runs: dict[tuple[str, str], list[dict[str, Any]]] = {case: [] for case in cases}
            for _ in range(args.repeat):
                for protocol, client in cases:
                    runs[protocol, client].append(measure(client, tokens, rate, protocol=protocol))
            for protocol, client in cases:
                record = median_record(runs[protocol, client])
                results[protocol, client, tokens, rate] = record
                print(json.dumps(_rounded(record)), flush=True)
    keys: dict[str, dict[str, Any]] = {}
    for protocol, client in cases if not args.no_keys else []:
        if not client.startswith("talkie"):
            continue
        key_tokens = 3000 if args.quick else 10_000
        typed = [
            measure(client, key_tokens, 500, keys=True, protocol=protocol)
            for _ in range(args.repeat)
        ]
        record = median_record(typed)
        record["phase"] = "keys_while_streaming"
        print(json.dumps(_rounded(record)), flush=True)
        if client == "talkie":
            keys[protocol] = record
    print(json.dumps(_rounded(summary(results, keys, sizes, rates, protocols))), flush=True)


def summary(
    results: dict[tuple[str, str, int, int], dict[str, Any]],
    keys: dict[str, dict[str, Any]],
    sizes: list[int],
    rates: list[int],
    protocols: list[str],
) -> dict[str, Any]:
    """Ratios of the stock client over talkie and of each other path over talkie's, and the
    goals of the streaming issue (each other path's under its name)."""
    out: dict[str, Any] = {"summary": "terminal_stream"}
    for tokens in sizes:
        for rate in rates:
            ours, stock = (
                results.get(("talkie", "talkie", tokens, rate)),
                results.get(("talkie", "stock", tokens, rate)),
            )
            if ours and stock:
                out[f"stock_over_talkie_cpu_{tokens}_at_{rate}"] = (
                    stock["cpu_ms_per_token"] / ours["cpu_ms_per_token"]
                )
            for protocol in protocols:
                other = results.get((protocol, "talkie", tokens, rate))
                if protocol != "talkie" and ours and other:
                    out[f"{protocol}_over_talkie_cpu_{tokens}_at_{rate}"] = (
                        other["cpu_ms_per_token"] / ours["cpu_ms_per_token"]
                    )
    for protocol in protocols:
        prefix = "" if protocol == "talkie" else f"{protocol}_"
        figures = _goal_figures(results, keys.get(protocol, {}), protocol)
        out.update({f"{prefix}{name}": value for name, value in figures.items()})
        for goal, limit in GOALS.items():
            value = figures.get(goal)
            if value is not None:
                met = value >= limit if goal == "frames_per_s" else value <= limit
                out[f"goal_{prefix}{goal}"] = met
    return out


def _goal_figures(
    results: dict[tuple[str, str, int, int], dict[str, Any]],
    keys: dict[str, Any],
    protocol: str,
) -> dict[str, Any]:
    """The figures GOALS names, of the talkie client on one protocol's path."""
    out: dict[str, Any] = {}
    big = results.get((protocol, "talkie", 10_000, 500))
    small = results.get((protocol, "talkie", 1000, 500))
    if big:
        out["cpu_ms_per_token_10000_at_500"] = big["cpu_ms_per_token"]
        out["lag_s"] = big["lag_s"]
        out["frames_per_s"] = big["frames_per_s"]
        out["max_gap_ms"] = big["max_gap_ms"]
    if big and small:
        out["growth_10000_over_1000_at_500"] = big["cpu_ms_per_token"] / small["cpu_ms_per_token"]
    fast = results.get((protocol, "talkie", 10_000, 2000)) or results.get(
        (protocol, "talkie", 1000, 2000)
    )
    if fast:
        out["cpu_ms_per_token_at_2000"] = fast["cpu_ms_per_token"]
    if keys:
        out["key_p95_ms"] = keys["key_p95_ms"]
    return out


if __name__ == "__main__":
    main()
