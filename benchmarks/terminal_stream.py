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
from collections.abc import Iterator
from dataclasses import dataclass, field
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
TMUX_CONF = """
set -g status off
set -g default-terminal tmux-256color
set -g escape-time 0
set -g history-limit 0
"""


@contextlib.contextmanager
def server(workdir: Path) -> Iterator[tuple[str, Path]]:
    """A fresh reference server on 127.0.0.1 (its own process and database)."""
    db = workdir / "server.sqlite3"
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, TOKEN, str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the server did not start: {url!r}")
        yield url, db
    finally:
        process.terminate()
        process.wait(10)


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

    def __init__(self, workdir: Path, command: list[str]) -> None:
        self.socket = f"talkie-bench-{os.getpid()}-{workdir.name}"
        conf = workdir / "tmux.conf"
        conf.write_text(TMUX_CONF)
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


def client_command(client: str, url: str) -> list[str]:
    """The command line of a client."""
    if client.startswith("talkie@"):
        tree = VARIANTS[client.removeprefix("talkie@")]
        return ["/usr/bin/env", f"PYTHONPATH={tree}", *client_command("talkie", url)]
    if client == "talkie":
        return [str(BIN / "talkie"), "connect", url, "--token", TOKEN]
    return [sys.executable, str(ROOT / "benchmarks" / "stock_client.py"), url, TOKEN]


def wait_for(predicate: Any, timeout: float, what: str) -> None:
    """Poll until `predicate()` is true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.1)


def measure(client: str, tokens: int, rate: int, *, keys: bool = False) -> dict[str, Any]:
    """One client streaming one answer; the figures of that run."""
    answer = long_answer(tokens, SEED)
    last_line = end_line(SEED)
    workdir = Path(tempfile.mkdtemp(prefix="talkie-tstream-"))
    try:
        with server(workdir) as (url, db):
            terminal = Terminal(workdir, client_command(client, url))
            try:
                return _measure(terminal, db, client, tokens, rate, answer, last_line, keys)
            finally:
                terminal.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _measure(
    terminal: Terminal,
    db: Path,
    client: str,
    tokens: int,
    rate: int,
    answer: str,
    last_line: str,
    keys: bool,
) -> dict[str, Any]:
    ready = "0 / 4,000" if client.startswith("talkie") else "Message"
    wait_for(lambda: ready in terminal.screen(), 30, f"{client} did not start")
    samples = Samples()
    # Settle: the client's start-up work (status, thread list) is not the stream's.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        samples.take(terminal.pid)
        if samples.idle():
            break
        time.sleep(SAMPLE)
    size = terminal.size()
    terminal.type(f"talkie-test:markdown {tokens} {rate} {SEED}")
    time.sleep(0.3)
    samples = Samples()
    samples.take(terminal.pid)
    system_before = cpu_times(terminal.pid)[1]
    start = terminal.output.mark()
    expected = tokens / rate if rate else 5.0
    profile = start_profile(terminal.pid, f"{client}-{tokens}-{rate}", expected)
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
            if shown is None and time.time() > sent + expected + 60 and token_times(db) is None:
                break  # the run never finished: reported below
        elif samples.idle() and samples.rows[-1][0] - shown >= IDLE_WINDOW:
            break
        time.sleep(SAMPLE if not keys else 0.01)
    system = cpu_times(terminal.pid)[1] - system_before
    if profile is not None:
        profile.wait(60)
    screen = terminal.screen()
    times = token_times(db)
    if times is None:
        raise RuntimeError(f"{client}: the run did not finish; the screen:\n{screen}")
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
    args = parser.parse_args()
    global PROFILE_DIR
    PROFILE_DIR = args.profile
    for variant in args.variant:
        name, _, tree = variant.partition("=")
        VARIANTS[name] = tree
    if shutil.which("tmux") is None:
        print(json.dumps({"skipped": "terminal_stream", "missing": "tmux"}))
        return
    sizes = args.tokens or ([1000] if args.quick else [1000, 10_000])
    rates = args.rates if args.rates is not None else ([500, 0] if args.quick else [500, 2000, 0])
    results: dict[tuple[str, int, int], dict[str, Any]] = {}
    for tokens in sizes:
        for rate in rates:
            # Clients take turns within each repeat, so a change in the machine's load falls on
            # all of them.
            runs: dict[str, list[dict[str, Any]]] = {client: [] for client in args.clients}
            for _ in range(args.repeat):
                for client in args.clients:
                    runs[client].append(measure(client, tokens, rate))
            for client in args.clients:
                record = median_record(runs[client])
                results[client, tokens, rate] = record
                print(json.dumps(_rounded(record)), flush=True)
    keys: dict[str, Any] = {}
    for client in args.clients if not args.no_keys else []:
        if not client.startswith("talkie"):
            continue
        key_tokens = 3000 if args.quick else 10_000
        typed = [measure(client, key_tokens, 500, keys=True) for _ in range(args.repeat)]
        record = median_record(typed)
        record["phase"] = "keys_while_streaming"
        print(json.dumps(_rounded(record)), flush=True)
        if client == "talkie":
            keys = record
    print(json.dumps(_rounded(summary(results, keys, sizes, rates))), flush=True)


def summary(
    results: dict[tuple[str, int, int], dict[str, Any]],
    keys: dict[str, Any],
    sizes: list[int],
    rates: list[int],
) -> dict[str, Any]:
    """Ratios of the stock client over talkie, and the goals of the streaming issue."""
    out: dict[str, Any] = {"summary": "terminal_stream"}
    for tokens in sizes:
        for rate in rates:
            ours, stock = (
                results.get(("talkie", tokens, rate)),
                results.get(("stock", tokens, rate)),
            )
            if ours and stock:
                out[f"stock_over_talkie_cpu_{tokens}_at_{rate}"] = (
                    stock["cpu_ms_per_token"] / ours["cpu_ms_per_token"]
                )
    big, small = results.get(("talkie", 10_000, 500)), results.get(("talkie", 1000, 500))
    if big:
        out["cpu_ms_per_token_10000_at_500"] = big["cpu_ms_per_token"]
        out["lag_s"] = big["lag_s"]
        out["frames_per_s"] = big["frames_per_s"]
        out["max_gap_ms"] = big["max_gap_ms"]
    if big and small:
        out["growth_10000_over_1000_at_500"] = big["cpu_ms_per_token"] / small["cpu_ms_per_token"]
    fast = results.get(("talkie", 10_000, 2000)) or results.get(("talkie", 1000, 2000))
    if fast:
        out["cpu_ms_per_token_at_2000"] = fast["cpu_ms_per_token"]
    if keys:
        out["key_p95_ms"] = keys["key_p95_ms"]
    for goal, limit in GOALS.items():
        value = out.get(goal)
        if value is not None:
            met = value >= limit if goal == "frames_per_s" else value <= limit
            out[f"goal_{goal}"] = met
    return out


if __name__ == "__main__":
    main()
