"""A harness app: MarkdownViews in a scrolling transcript, recording the links people open."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from talkie_tui.ui.messages import OpenLinkRequested
from talkie_tui.ui.widgets.markdown_view import MarkdownView

STYLESHEET = Path(__file__).resolve().parents[3] / "talkie_tui" / "ui" / "styles" / "markdown.tcss"

ANSWER = """\
# Renewal summary

The account **Acme Corp** renews *next month*; the quote is in `quote_2026.pdf`.
See [the CRM record](https://crm.example.com/a/42) or <https://example.com/help>.

## Fields

**Owner:** Ada Lovelace
**Status:** active

- Pipeline grew in every region
- Two deals slipped, one of them because legal review took longer than planned
  - waiting for legal
1. Confirm the date
2. Send the quote

> Numbers are provisional.

```python
def total(rows):
    return sum(r.amount for r in rows)
```

Shown as typed: [b]markup[/b], [@click=app.quit]x[/], <b>html</b>, ![logo](https://x.example/l.png)
"""


class MarkdownApp(App[None]):
    """One transcript; `views` holds MarkdownViews given up front."""

    CSS_PATH = STYLESHEET

    def __init__(self, *views: MarkdownView) -> None:
        super().__init__()
        self.views = views
        self.opened: list[OpenLinkRequested] = []

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="transcript"):
            yield from self.views

    def on_open_link_requested(self, message: OpenLinkRequested) -> None:
        """Record the request instead of opening anything."""
        self.opened.append(message)
