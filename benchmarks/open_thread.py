"""How long a stored thread takes to be on screen: 1,000 messages (100 cards) against 100.

Each size goes the whole way a real open goes: the `GET thread` JSON is parsed into models,
folded by the reducer (`conversation_from_history`) and shown in the transcript, until the
frame is drawn. Both sizes run in one process, alternately, and the best of the rounds is kept.
Prints JSON lines; the target is at most 2x the time of the 100-message thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from pathlib import PurePath
from typing import Any

from textual.app import App, ComposeResult

from talkie_tui.backends.talkie.reducer import conversation_from_history
from talkie_tui.protocol.talkie.models import ThreadHistory
from talkie_tui.ui.support.stylesheets import chat_stylesheets, startup_stylesheets
from talkie_tui.ui.widgets.transcript import Transcript

PARAGRAPH = (
    "Alfa s.r.o. renewed the **annual licence**; the next meeting is on *Friday* at 10:00. "
    "See `N-2026-014` for the offer and [the record](/crm/companies/alfa)."
)


def card(index: int) -> dict[str, Any]:
    """A typical result card."""
    return {
        "id": f"c{index}",
        "title": f"Company {index}",
        "subtitle": "Client · Brno",
        "blocks": [
            {"type": "badge", "text": "Active", "tone": "positive"},
            {"type": "fields", "fields": [{"label": "ID", "value": f"{index:08d}"}]},
            {"type": "list", "items": [{"title": "Meeting 10:00"}], "more": 2},
        ],
        "fallbackText": f"Company {index} – client in Brno",
    }


def thread_json(messages: int, cards: int) -> str:
    """A `GET thread` body with `messages` messages, `cards` of them carrying a card."""
    every = max(1, messages // max(1, cards))
    items = []
    for index in range(messages):
        role = "user" if index % 2 == 0 else "assistant"
        item: dict[str, Any] = {
            "id": f"m{index}",
            "role": role,
            "content": f"Question {index}?" if role == "user" else PARAGRAPH,
            "createdAt": "2026-11-30T08:00:00Z",
        }
        if role == "assistant" and index % every == 1 and cards:
            item["cards"] = [card(index)]
        items.append(item)
    return json.dumps({"thread": {"id": "t1", "title": "Bench"}, "messages": items, "actions": []})


STYLESHEETS: list[str | PurePath] = [*startup_stylesheets(), *chat_stylesheets()]
"""Every stylesheet of the real app, the chat's included."""


class BenchApp(App[None]):
    """Only the transcript, styled as in the real app."""

    CSS_PATH = STYLESHEETS

    def get_css_variables(self) -> dict[str, str]:
        """The theme plus the `$server-accent` the stylesheets use."""
        variables = super().get_css_variables()
        return {**variables, "server-accent": variables.get("accent", "#0178d4")}

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")


async def open_once(body: str, *, trace_memory: bool = False) -> tuple[float, int]:
    """Seconds from the JSON to the drawn frame; with `trace_memory`, the peak bytes instead
    (tracemalloc slows Python down several times, so time and memory are separate runs)."""
    app = BenchApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        gc.collect()
        if trace_memory:
            tracemalloc.start()
        started = time.perf_counter()
        conversation = conversation_from_history(ThreadHistory.model_validate_json(body))
        app.query_one(Transcript).show(conversation)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        elapsed = time.perf_counter() - started
        peak = 0
        if trace_memory:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    return elapsed, peak


async def main(rounds: int) -> None:
    sizes = {"100_messages": thread_json(100, 10), "1000_messages": thread_json(1000, 100)}
    best: dict[str, tuple[float, int]] = {}
    peaks = {name: (await open_once(body, trace_memory=True))[1] for name, body in sizes.items()}
    for round_ in range(1, rounds + 1):
        for name, body in sizes.items():
            seconds, _ = await open_once(body)
            peak = peaks[name]
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, peak)
            print(
                json.dumps(
                    {
                        "benchmark": "open_thread",
                        "thread": name,
                        "round": round_,
                        "seconds": round(seconds, 4),
                        "peak_memory_mb": round(peak / 1e6, 2),
                    }
                )
            )
    ratio = best["1000_messages"][0] / best["100_messages"][0]
    print(
        json.dumps(
            {
                "benchmark": "open_thread",
                "summary": True,
                "seconds_100": round(best["100_messages"][0], 4),
                "seconds_1000": round(best["1000_messages"][0], 4),
                "ratio": round(ratio, 2),
                "peak_memory_mb_100": round(peaks["100_messages"] / 1e6, 2),
                "peak_memory_mb_1000": round(peaks["1000_messages"] / 1e6, 2),
                "target_ratio": 2.0,
                "meets_target": ratio <= 2.0,
            }
        )
    )


if __name__ == "__main__":
    import asyncio

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args().rounds))
