"""Notifications that show their text as it is: never read as Rich or Textual markup.

Server text is data (docs/ARCHITECTURE.md): a server's name, its error message or a file name
may hold square brackets, and Textual's `notify` reads its message as content markup unless told
`markup=False` — a "[b]" would turn bold, a "[/]" would raise. So talkie never calls `notify`
with markup on; `notify_plain` is the one way to show a notification, and
`tests/ui/test_no_markup_notify.py` fails on any `notify` call in `talkie_tui.ui` that could
read markup.

A function, not an override of `App.notify`: `Widget.notify` (screens included) hands
`markup=True` on to the app explicitly, so an app-level default would not reach those calls,
and forcing `markup=False` there would silently ignore what a caller wrote and hold only inside
`TalkieApp`, not in the test harness apps that run single screens.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.notifications import SeverityLevel
from textual.widget import Widget

__all__ = ["notify_plain"]


def notify_plain(
    where: App[Any] | Widget,
    message: str,
    *,
    title: str = "",
    severity: SeverityLevel = "information",
    timeout: float | None = None,
) -> None:
    """Show `message` as a notification from `where` (the app, a screen or a widget).

    Thread-safe as `notify` is; `timeout` None is Textual's default.
    """
    where.notify(message, title=title, severity=severity, timeout=timeout, markup=False)
