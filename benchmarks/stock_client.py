"""A stock Textual chat client, the yardstick of benchmarks/terminal_stream.py.

One `Markdown` widget fed by `Markdown.get_stream` (Textual's `MarkdownStream`), an `Input`,
and the run's SSE stream read with httpx: what a Textual app does when it follows the docs.
Usage: python benchmarks/stock_client.py URL TOKEN
"""

from __future__ import annotations

import json
import sys

import httpx
from run_body import run_body
from textual import on, work
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown


class StockClient(App[None]):
    """Type a message, press Enter, watch the answer stream in."""

    CSS = "Input { dock: bottom; }"
    AUTO_FOCUS = "Input"

    def __init__(self, url: str, token: str) -> None:
        super().__init__()
        self.url, self.token = url, token

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="chat"):
            yield Markdown(id="answer")
        yield Input(placeholder="Message")

    def on_mount(self) -> None:
        self.query_one("#chat").anchor()

    @on(Input.Submitted)
    def send(self, event: Input.Submitted) -> None:
        event.input.clear()
        self.stream(event.value)

    @work(exclusive=True)
    async def stream(self, text: str) -> None:
        """POST a run and write every text delta into the Markdown widget's stream."""
        answer = self.query_one("#answer", Markdown)
        body = run_body(text)
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "text/event-stream"}
        stream = Markdown.get_stream(answer)
        try:
            async with (
                httpx.AsyncClient(timeout=None) as http,
                http.stream("POST", f"{self.url}/api/talkie/run", json=body, headers=headers) as r,
            ):
                async for line in r.aiter_lines():
                    if line.startswith("data: "):
                        event = json.loads(line[6:])
                        if event["type"] == "TEXT_MESSAGE_CONTENT":
                            await stream.write(event["delta"])
        finally:
            await stream.stop()


if __name__ == "__main__":
    StockClient(sys.argv[1], sys.argv[2]).run()
