"""A bare Textual app, the yardstick of benchmarks/startup.py: Header, Input, Footer.

Usage: python benchmarks/bare_app.py
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Input


class BareApp(App[None]):
    """What `textual` gives for a chat box, and nothing else."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="Message")
        yield Footer()


if __name__ == "__main__":
    BareApp().run()
