"""Streaming a long Markdown answer into a transcript: the cost per delta must stay flat.

Headless (`App.run_test`, 120x40), in one run and one app:

1. history: a transcript (`VerticalScroll`, anchored to the bottom) with 200 finished
   `MarkdownView` messages of typical size.
2. naive: a `Static` showing `rich.markdown.Markdown(whole_text)`, rebuilt on every delta
   (Elia's pattern: the whole text is re-parsed per delta, re-wrapped and laid out per frame),
   over the first 1,000 tokens only (it grows quadratically).
3. markdown_view: `MarkdownView(streaming=True)` receives a 10,000-token answer (headings,
   prose, `**Label:** value` fields, nested lists, code fences; 4 characters per token), then
   `finish()`.
4. markdown_view_unpaced: the same, with no pacing at all.
5. keys_pilot / keys_driver: the same stream again while a key bound to an action is pressed,
   once through `pilot.press` (one press at a time: each returns only when the app looks idle,
   up to 1 s while streaming, so this stream runs at 500 tokens/s to collect enough presses)
   and once every 100 ms at the full rate by posting the same `Key` event through the driver,
   as a terminal's input thread does, without pilot's wait-for-idle and its message to every
   widget. Latency is from the press to the bound action's handler; the summary pools both.

Feeding: each delta is written, then the feeder yields with `await asyncio.sleep(...)`, so the
app's timers (60 Hz screen updates, the view's 24 Hz flush) and message queues run whenever
they are due, as between network reads. `pilot.pause(0)` was not used: it posts a message to
every widget and forces a screen update per delta (harness work that grows with the history).
Unpaced (`sleep(0)`), the view accepts the whole answer in a fraction of a second because
`append()` only queues text and re-renders at most 24 times a second; so few frames happen that
"cost per delta" would mostly measure the loop. The measured stream is therefore paced at
--rate tokens/s (default 2,000, ten times a fast model) and its cost is CPU time (all of the
app's work: appends, flushes, layout, paint) per delta. The naive widget cannot keep up with
any pace, so it is fed unpaced; its CPU per delta is its cost either way.

Output: one JSON line per phase, then a summary with the three target checks (naive/view over
the first 1,000 tokens >= 20; last tenth/first tenth <= 1.5; key latency p95 < 50 ms). The lag
runs from the last delta to the paint of the final text's last line. Headless Textual renders
every frame but does not write the bytes to a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.markdown import Markdown as RichMarkdown
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Static

from talkie_tui.ui.widgets.markdown_view import MarkdownView

STYLES = Path(__file__).resolve().parent.parent / "talkie_tui" / "ui" / "styles" / "markdown.tcss"
SIZE = (120, 40)
CHARS_PER_TOKEN = 4
HISTORY = 200
NAIVE_TOKENS = 1000
RATE = 2000.0
PILOT_KEYS_RATE = 500.0
KEY = "f9"
KEY_INTERVAL = 0.1
PAINT_TIMEOUT = 30.0

TARGET_NAIVE_RATIO = 20.0
TARGET_FLATNESS = 1.5
TARGET_KEY_MS = 50.0


def answer_section(index: int) -> str:
    """One section of the synthetic answer (~1.3 kB): heading, prose, fields, lists, code."""
    return (
        f"## Section {index}: findings\n\n"
        f"The account **Acme {index}** shows *steady* growth; see `report_{index}.csv` and "
        f"[the dashboard](https://example.com/d/{index}) for details. Numbers are rounded, and "
        "the quarter is not closed yet, so treat them as provisional.\n\n"
        f"**Owner:** Ada Lovelace\n**Status:** active\n**Renewal:** 2026-0{index % 9 + 1}-15\n"
        f"**Value:** {1000 + index * 37} EUR\n\n"
        "- Pipeline grew in every region but one\n"
        "- Two deals slipped to next quarter\n"
        "  - one waits for legal review\n"
        "  - one waits for a budget decision\n"
        "- Churn stayed below target\n\n"
        "1. Confirm the renewal date\n"
        "2. Send the revised quote\n"
        "3. Book a review call\n\n"
        "```python\n"
        f"def forecast_{index}(rows):\n"
        "    total = 0\n"
        "    for row in rows:\n"
        "        total += row.amount * row.probability\n"
        "    return round(total, 2)\n"
        "```\n\n"
        "> Forecasts use the probability recorded on each deal.\n\n"
    )


def make_answer(tokens: int) -> str:
    """A Markdown answer of exactly `tokens` tokens of 4 characters."""
    parts = ["# Quarterly review\n\n"]
    size = len(parts[0])
    while size < tokens * CHARS_PER_TOKEN:
        parts.append(answer_section(len(parts)))
        size += len(parts[-1])
    return "".join(parts)[: tokens * CHARS_PER_TOKEN]


def history_message(index: int) -> str:
    """An earlier message of typical size (a paragraph, a list, fields, sometimes code)."""
    text = (
        f"Here is what I found about request {index}: the **status** is *open*, and the "
        f"owner is `team-{index % 7}`. More in [ticket {index}](https://example.com/t/{index}).\n\n"
        "- first point to check\n- second point to check\n- third point\n\n"
        f"**Priority:** {index % 3 + 1}\n**Due:** next week\n"
    )
    if index % 4 == 0:
        text += "\n```sh\ncurl https://example.com/api/items\n```\n"
    return text


def tokenize(text: str) -> list[str]:
    """Split into 4-character deltas, as a model would stream them."""
    return [text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]


class ProbeView(MarkdownView):
    """Counts tail flushes and records when the finished answer's last line is painted."""

    painted_final_at: float | None = None
    flushes = 0

    def _flush(self) -> None:
        self.flushes += 1
        super()._flush()

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not self.streaming and self.painted_final_at is None and y == self.size.height - 1:
            self.painted_final_at = time.perf_counter()
        return strip


class NaiveView(Static):
    """Re-parses the whole text on every delta (and re-renders it on every frame)."""

    def __init__(self) -> None:
        super().__init__("")
        self.source = ""

    def add(self, delta: str) -> None:
        """Append a delta and rebuild the whole renderable."""
        self.source += delta
        self.update(RichMarkdown(self.source))


class TranscriptApp(App[None]):
    """A transcript, and a bound key whose handler records when it ran."""

    CSS_PATH = STYLES
    BINDINGS = [Binding(KEY, "ping", show=False)]  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__()
        self.handled_at: list[float] = []

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="transcript")

    def action_ping(self) -> None:
        """The bound key's handler: note when it ran."""
        self.handled_at.append(time.perf_counter())


@dataclass
class Stream:
    """Clock readings taken after every delta of one streamed answer."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    flushes: list[int] = field(default_factory=list)
    last_delta: float = 0.0
    painted: float | None = None

    def stamp(self, view: ProbeView) -> None:
        """Read the clocks."""
        self.wall.append(time.perf_counter())
        self.cpu.append(time.process_time())
        self.flushes.append(view.flushes)

    def window(self, start: int, end: int) -> dict[str, float]:
        """Costs between delta `start` and delta `end`."""
        cpu_ms = (self.cpu[end] - self.cpu[start]) * 1000
        flushes = self.flushes[end] - self.flushes[start]
        return {
            "cpu_ms_per_delta": cpu_ms / (end - start),
            "flushes": flushes,
            "cpu_ms_per_flush": cpu_ms / flushes if flushes else float("nan"),
        }

    @property
    def lag_ms(self) -> float | None:
        """Last delta to the paint of the final text."""
        return None if self.painted is None else (self.painted - self.last_delta) * 1000


async def feed(view: ProbeView, deltas: list[str], rate: float) -> Stream:
    """Append every delta (`rate` per second, or unpaced if 0), `finish()`, await the paint."""
    stream = Stream()
    gc.collect()
    stream.stamp(view)
    start = stream.wall[0]
    for index, delta in enumerate(deltas):
        view.append(delta)
        due = start + (index + 1) / rate if rate else 0.0
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        stream.stamp(view)
    stream.last_delta = time.perf_counter()
    view.finish()
    while view.painted_final_at is None and time.perf_counter() < stream.last_delta + 30:  # noqa: ASYNC110
        await asyncio.sleep(0.001)
    stream.painted = view.painted_final_at
    return stream


async def run_naive(
    transcript: VerticalScroll, deltas: list[str], pilot: Pilot[None]
) -> dict[str, Any]:
    """Stream unpaced into the naive Static (it cannot keep up with any pace anyway)."""
    naive = NaiveView()
    await transcript.mount(naive)
    await pilot.pause()
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    for delta in deltas:
        naive.add(delta)
        await asyncio.sleep(0)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await naive.remove()
    await pilot.pause()
    return {
        "phase": "naive",
        "widget": "Static(rich.markdown.Markdown(whole_text)) rebuilt per delta",
        "deltas": len(deltas),
        "cpu_ms_per_delta": cpu * 1000 / len(deltas),
        "wall_ms_per_delta": wall * 1000 / len(deltas),
    }


async def run_view(
    transcript: VerticalScroll, deltas: list[str], pilot: Pilot[None], rate: float
) -> tuple[Stream, ProbeView]:
    """Stream the answer into a fresh view below the history; remove it afterwards."""
    view = ProbeView(streaming=True)
    await transcript.mount(view)
    await pilot.pause()
    stream = await feed(view, deltas, rate)
    if view.text != "".join(deltas):
        raise AssertionError("the view lost text")
    await view.remove()
    await pilot.pause()
    return stream, view


Press = Callable[[], Awaitable[None]]


async def press_every(press: Press, stop: asyncio.Event, sent_at: list[float]) -> None:
    """Press the bound key, wait KEY_INTERVAL, repeat until `stop`."""
    # One press at a time: `pilot.press` returns only once the app looks idle (up to a second
    # while streaming), then posts a message to every widget; overlapping presses would mostly
    # measure each other.
    while not stop.is_set():
        sent_at.append(time.perf_counter())
        await press()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), KEY_INTERVAL)


async def run_keys(
    name: str,
    app: TranscriptApp,
    press: Press,
    run: Callable[[], Awaitable[tuple[Stream, ProbeView]]],
) -> dict[str, Any]:
    """Stream while pressing the key; latency is from the press to the action handler."""
    app.handled_at.clear()
    stop = asyncio.Event()
    sent_at: list[float] = []
    keys = asyncio.create_task(press_every(press, stop, sent_at))
    stream, _ = await run()
    stop.set()
    await keys
    latencies = sorted(
        (done - sent) * 1000 for sent, done in zip(sent_at, app.handled_at, strict=True)
    )
    return {
        "phase": name,
        "presses": len(sent_at),
        "handled": len(app.handled_at),
        "p50_ms": _percentile(latencies, 0.5),
        "p95_ms": _percentile(latencies, 0.95),
        "max_ms": latencies[-1] if latencies else None,
        "final_frame_lag_ms": stream.lag_ms,
        "latencies_ms": latencies,
    }


def _percentile(ordered: list[float], fraction: float) -> float | None:
    if not ordered:
        return None
    return ordered[round(fraction * (len(ordered) - 1))]


async def bench(tokens: int, rate: float, freeze: bool) -> list[dict[str, Any]]:
    """Run every phase in one app and return the JSON records."""
    deltas = tokenize(make_answer(tokens))
    count = len(deltas)
    tenth = max(1, count // 10)
    compared = min(NAIVE_TOKENS, count)
    app = TranscriptApp()
    records: list[dict[str, Any]] = []
    started = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        transcript = app.query_one("#transcript", VerticalScroll)
        transcript.anchor()
        clock = time.perf_counter()
        await transcript.mount_all(MarkdownView(history_message(i)) for i in range(HISTORY))
        await pilot.pause()
        records.append(
            {"phase": "history", "messages": HISTORY, "mount_s": time.perf_counter() - clock}
        )
        if freeze:
            # What an app can do after loading a thread: full collections skip the history.
            gc.collect()
            gc.freeze()

        naive = await run_naive(transcript, deltas[:compared], pilot)
        records.append(naive)

        stream, view = await run_view(transcript, deltas, pilot, rate)
        first, last = stream.window(0, tenth), stream.window(count - tenth, count)
        head = stream.window(0, compared)
        records.append(
            {
                "phase": "markdown_view",
                "rate_tokens_per_s": rate,
                "deltas": count,
                "total_s": stream.last_delta - stream.wall[0],
                "final_frame_lag_ms": stream.lag_ms,
                "frozen_blocks": view.frozen_block_count,
                **{f"first_tenth_{key}": value for key, value in first.items()},
                **{f"last_tenth_{key}": value for key, value in last.items()},
                f"first_{compared}_cpu_ms_per_delta": head["cpu_ms_per_delta"],
            }
        )

        unpaced, _ = await run_view(transcript, deltas, pilot, 0)
        records.append(
            {
                "phase": "markdown_view_unpaced",
                "deltas": count,
                "total_s": unpaced.last_delta - unpaced.wall[0],
                "final_frame_lag_ms": unpaced.lag_ms,
            }
        )

        def paced(tokens_per_s: float) -> Callable[[], Awaitable[tuple[Stream, ProbeView]]]:
            return lambda: run_view(transcript, deltas, pilot, tokens_per_s)

        async def driver_press() -> None:
            event = events.Key(KEY, None)
            event.set_sender(app)
            if app._driver is not None:
                app._driver.send_message(event)

        pilot_keys = await run_keys(
            "keys_pilot", app, lambda: pilot.press(KEY), paced(PILOT_KEYS_RATE)
        )
        driver_keys = await run_keys("keys_driver", app, driver_press, paced(rate))
        records += [pilot_keys, driver_keys]
    if freeze:
        gc.unfreeze()
    latencies = sorted(pilot_keys["latencies_ms"] + driver_keys["latencies_ms"])
    key_p95 = _percentile(latencies, 0.95)
    naive_ratio = naive["cpu_ms_per_delta"] / head["cpu_ms_per_delta"]
    flatness = last["cpu_ms_per_delta"] / first["cpu_ms_per_delta"]
    records.append(
        {
            "summary": "render_stream",
            "gc_freeze": freeze,
            "naive_over_view_first_1000": naive_ratio,
            "target_naive_20x": naive_ratio >= TARGET_NAIVE_RATIO,
            "last_over_first_tenth": flatness,
            "target_flat_1_5x": flatness <= TARGET_FLATNESS,
            "key_latency_p95_ms": key_p95,
            "key_latency_max_ms": latencies[-1] if latencies else None,
            "target_keys_50ms": key_p95 is not None and key_p95 < TARGET_KEY_MS,
            "final_frame_lag_ms": stream.lag_ms,
            "wall_s": time.perf_counter() - started,
        }
    )
    return records


def _rounded(record: dict[str, Any]) -> dict[str, Any]:
    return {
        key: round(value, 3) if isinstance(value, float) else value for key, value in record.items()
    }


def main() -> None:
    """Parse options, run, print JSON lines."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tokens", type=int, default=10_000, help="answer length in tokens")
    parser.add_argument("--rate", type=float, default=RATE, help="tokens/s of the paced streams")
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.freeze() after mounting the history, as an app may after loading a thread",
    )
    args = parser.parse_args()
    for record in asyncio.run(bench(args.tokens, args.rate, args.gc_freeze)):
        record.pop("latencies_ms", None)
        print(json.dumps(_rounded(record)))


if __name__ == "__main__":
    main()
