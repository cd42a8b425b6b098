"""Start-up: how long talkie takes from exec to usable, against bare references, in one run.

Figures (each the median and range of --repeat runs, and its ratio to its reference, run in
turn with it so a change in the machine's load falls on both):

- connect_P: `talkie connect URL --token T` in tmux at 120x40 (TERM=tmux-256color, a minimal
  environment) until the screen shows the message box (its "Message" border), for each
  protocol P: the reference Talkie server (test mode, a development token), the reference
  Minara gateway (its auth token), a Cuckoo hub with a person's kept session (the stack of
  `talkie demo --protocol cuckoo`; the session token is given). Reference: a bare Textual app
  (benchmarks/bare_app.py: Header, Input, Footer) until its Input shows. TALKIE_HOME is kept
  between runs, so a connect finds the server known, as the second start of the day does; a
  first, uncounted round fills it.
- picker: `talkie connect` with no address until the known servers are listed. Reference: the
  bare app.
- ask: `talkie ask URL 'talkie-test:echo hi' --token T`, the whole process. Reference: the same
  requests and output by twenty lines of httpx + httpx-sse (benchmarks/httpx_ask.py).
- help, servers: `talkie --help`, `talkie servers`, whole processes. Reference:
  `python -c "import httpx"`.

The time of a terminal client runs from just before tmux execs it to the first
`tmux capture-pane` that shows its mark (polled every 10 ms); its RSS then is printed too.
`--variant NAME=DIR` also runs DIR/talkie_tui (another checkout) as client talkie@NAME in the
same rounds, for before/after figures from the same conditions. Prints JSON lines; `--markdown`
adds the table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from terminal_stream import BIN, ROOT, Stack, Terminal, stack

MESSAGE_BOX = "─ Message ─"
"""The chat's composer border: the message box is on screen."""
PICKER = "Known servers"
"""The connect screen's list title (with an empty or known list under it)."""
BARE = "Message"
"""The bare app's Input placeholder."""
POLL = 0.01
GOALS = {"connect": 1.5, "picker": 1.3, "ask": 2.0, "help": 1.5, "servers": 1.5}


@dataclass
class Case:
    """One figure: a talkie command (per client) against its reference command."""

    figure: str
    goal: float
    reference: str
    talkie: Callable[[list[str]], list[str]]
    """The command line, given how to start talkie (`[.../talkie]` or a variant's)."""
    mark: str | None
    """What the screen shows once usable; None: a whole process, timed to its exit."""


def rss_mb(pid: int) -> float:
    """The resident memory of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def in_terminal(command: list[str], mark: str, home: Path) -> tuple[float, float]:
    """Seconds from exec to `mark` on the screen, and the RSS (MB) then."""
    with tempfile.TemporaryDirectory(prefix="talkie-startup-") as folder:
        terminal = Terminal(Path(folder), command, home=home)
        try:
            deadline = terminal.started + 60
            while mark not in terminal.screen():
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"{command[-3:]} never showed {mark!r}")
                time.sleep(POLL)
            seconds = time.perf_counter() - terminal.started
            return seconds, rss_mb(terminal.pid)
        finally:
            terminal.close()


def whole_process(command: list[str], home: Path) -> float:
    """Seconds a command takes from start to exit (it must succeed)."""
    env = {"HOME": str(home), "TALKIE_HOME": str(home), "PATH": "/usr/bin:/bin"}
    env["LANG"] = "C.UTF-8"
    started = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True, cwd=ROOT)
    return time.perf_counter() - started


@contextlib.contextmanager
def servers(workdir: Path) -> Iterator[dict[str, Stack]]:
    """The three protocols' reference servers, fresh, on 127.0.0.1, for the whole run."""
    with contextlib.ExitStack() as stacks:
        served = {}
        for protocol in ("talkie", "minara", "cuckoo"):
            folder = workdir / protocol
            folder.mkdir()
            served[protocol] = stacks.enter_context(stack(protocol, folder))
        yield served


def cases(served: dict[str, Stack]) -> list[Case]:
    """Every figure of the run."""
    bare = [sys.executable, str(ROOT / "benchmarks" / "bare_app.py")]
    talkie = served["talkie"]
    found = [
        Case(
            f"connect_{protocol}",
            GOALS["connect"],
            "bare_textual",
            lambda start, s=s: [*start, "connect", s.url, "--token", s.token],
            MESSAGE_BOX,
        )
        for protocol, s in served.items()
    ]
    found.append(Case("picker", GOALS["picker"], "bare_textual", lambda s: [*s, "connect"], PICKER))
    found.append(
        Case(
            "ask",
            GOALS["ask"],
            "httpx_script",
            lambda s: [*s, "ask", talkie.url, "talkie-test:echo hi", "--token", talkie.token],
            None,
        )
    )
    found.append(Case("help", GOALS["help"], "import_httpx", lambda s: [*s, "--help"], None))
    found.append(Case("servers", GOALS["servers"], "import_httpx", lambda s: [*s, "servers"], None))
    REFERENCES.update(
        {
            "bare_textual": (bare, BARE),
            "httpx_script": (
                [
                    sys.executable,
                    str(ROOT / "benchmarks" / "httpx_ask.py"),
                    talkie.url,
                    talkie.token,
                    "talkie-test:echo hi",
                ],
                None,
            ),
            "import_httpx": ([sys.executable, "-c", "import httpx"], None),
        }
    )
    return found


REFERENCES: dict[str, tuple[list[str], str | None]] = {}
"""Each reference's command and mark (None: a whole process)."""


def run_once(command: list[str], mark: str | None, home: Path) -> tuple[float, float | None]:
    """One timing (seconds, and the RSS for a terminal client)."""
    if mark is None:
        return whole_process(command, home), None
    return in_terminal(command, mark, home)


def spread(values: list[float]) -> dict[str, float]:
    """Median, least and most."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    """Parse options, time every figure in rounds, print JSON lines (and the table)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="counted rounds (default 7)")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="also run DIR/talkie_tui as client talkie@NAME",
    )
    parser.add_argument("--only", nargs="*", help="only these figures (connect_talkie, ask…)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print(json.dumps({"skipped": "startup", "missing": "tmux"}))
        return
    clients: dict[str, list[str]] = {"talkie": [str(BIN / "talkie")]}
    for variant in args.variant:
        name, _, tree = variant.partition("=")
        clients[f"talkie@{name}"] = ["/usr/bin/env", f"PYTHONPATH={tree}", str(BIN / "talkie")]
    with (
        tempfile.TemporaryDirectory(prefix="talkie-startup-") as folder,
        servers(Path(folder)) as served,
    ):
        workdir = Path(folder)
        homes = {client: workdir / f"home-{index}" for index, client in enumerate(clients)}
        for home in [*homes.values(), workdir / "home-reference"]:
            home.mkdir()
        figures = [case for case in cases(served) if not args.only or case.figure in args.only]
        timings: dict[tuple[str, str], list[tuple[float, float | None]]] = {}
        for round_ in range(args.repeat + 1):  # round 0 fills the homes and the caches
            for case in figures:
                reference, mark = REFERENCES[case.reference]
                runs = [("reference", reference, mark, workdir / "home-reference")]
                runs += [
                    (client, case.talkie(start), case.mark, homes[client])
                    for client, start in clients.items()
                ]
                for client, command, mark, home in runs:
                    timing = run_once(command, mark, home)
                    if round_:
                        timings.setdefault((case.figure, client), []).append(timing)
        rows = [row for case in figures for row in report(case, clients, timings)]
    for row in rows:
        print(json.dumps(row), flush=True)
    if args.markdown:
        print(markdown(rows))


def report(
    case: Case,
    clients: dict[str, list[str]],
    timings: dict[tuple[str, str], list[tuple[float, float | None]]],
) -> Iterator[dict[str, Any]]:
    """The figure's JSON line per client: its time and its ratio to the reference's."""
    reference = [seconds for seconds, _ in timings[case.figure, "reference"]]
    for client in clients:
        runs = timings[case.figure, client]
        seconds = [value for value, _ in runs]
        ratios = [value / base for value, base in zip(seconds, reference, strict=True)]
        ratio = statistics.median(seconds) / statistics.median(reference)
        row: dict[str, Any] = {
            "benchmark": "startup",
            "figure": case.figure,
            "client": client,
            "seconds": _round(spread(seconds), 3),
            "reference": case.reference,
            "reference_seconds": _round(spread(reference), 3),
            "ratio": round(ratio, 2),
            "ratio_per_round": _round(spread(ratios), 2),
            "goal_ratio": case.goal,
            "meets_goal": ratio <= case.goal,
            "rounds": len(runs),
        }
        memory = [rss for _, rss in runs if rss is not None]
        if memory:
            row["rss_mb"] = round(statistics.median(memory), 1)
        yield row


def _round(values: dict[str, float], digits: int) -> dict[str, float]:
    return {key: round(value, digits) for key, value in values.items()}


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (median and range, the ratio of the medians)."""

    def shown(values: dict[str, float]) -> str:
        return f"{values['median']:.2f} s ({values['min']:.2f}–{values['max']:.2f})"

    lines = [
        "| figure | client | time | reference | reference time | ratio (range) | goal |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        per_round = row["ratio_per_round"]
        lines.append(
            f"| {row['figure']} | {row['client']} | {shown(row['seconds'])} | {row['reference']} "
            f"| {shown(row['reference_seconds'])} | {row['ratio']:.2f}× "
            f"({per_round['min']:.2f}–{per_round['max']:.2f}) | ≤ {row['goal_ratio']}× |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
