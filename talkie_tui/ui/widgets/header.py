"""The chat header: server name and logo, signed-in user, usage meters, connection state."""

from __future__ import annotations

import math
from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.events import Resize
from textual.reactive import reactive
from textual.widgets import Static

from talkie_tui.chat.vocabulary import UsageMeter, User
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _, ngettext

from .logo import LogoView

__all__ = ["ConnectionState", "TalkieHeader", "format_meter"]

WIDE = 100  # columns from which the header has room for the logo

ConnectionState = Literal["connected", "streaming", "reconnecting", "offline", "connecting"]

_STATE_LABELS: dict[str, str] = {
    "connecting": N_("◌ connecting…"),
    "connected": N_("● connected"),
    "streaming": N_("◉ answering…"),
    "reconnecting": N_("◌ reconnecting… {seconds} s · Esc stops waiting"),
    "offline": N_("○ offline"),
}
OFFLINE_SINCE = N_("○ offline since {since} · next try in {seconds} s")


def _short(number: float) -> str:
    if number >= 1_000_000:
        return f"{number / 1_000_000:.1f}M".replace(".0M", "M")
    if number >= 10_000:
        return f"{number / 1000:.0f}k"
    if number >= 1000:
        return f"{number / 1000:.1f}k".replace(".0k", "k")
    return f"{number:g}"


def format_meter(meter: UsageMeter, bar_width: int = 6) -> Text:
    """`Tokens today ▰▰▱▱▱▱ 12k/400k` — a compact usage meter (plain text, never markup)."""
    text = Text(f"{meter.label} ", style="dim")
    if meter.limit:
        ratio = meter.used / meter.limit
        # Absurd figures (1e308 over 1e-308 is infinite) must not break the header.
        ratio = min(max(ratio, 0.0), 1.0) if math.isfinite(ratio) else 1.0
        filled = round(bar_width * ratio)
        style = "red" if ratio >= 0.9 else "yellow" if ratio >= 0.7 else "green"
        text.append("▰" * filled, style=style)
        text.append("▱" * (bar_width - filled), style="dim")
        text.append(f" {_short(meter.used)}/{_short(meter.limit)}")
    else:
        text.append(_short(meter.used))
    if meter.unit and not meter.limit:
        text.append(f" {meter.unit}", style="dim")
    return text


class TalkieHeader(Horizontal):
    """One line at the top of the chat screen."""

    state: reactive[str] = reactive("connecting")
    pending_actions: reactive[int] = reactive(0)
    # Seconds spent "reconnecting": waiting for a broken stream's answer from the thread.
    waited: reactive[int] = reactive(0)

    def __init__(self, server_name: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._server_name = server_name
        self._user: User | None = None
        self._usage: tuple[UsageMeter, ...] = ()
        self._offline: tuple[str, int] | None = None  # since when, and the next try in seconds

    def compose(self) -> ComposeResult:
        yield LogoView(None, id="header-logo")
        yield Static(Text(self._server_name, style="bold"), id="header-server")
        yield Static(id="header-user")
        yield Static(id="header-usage")
        yield Static(id="header-pending")
        yield Static(id="header-activity")
        yield Static(id="header-state")

    def on_mount(self) -> None:
        self.watch_state(self.state)

    def set_user(self, user: User) -> None:
        """Show who is signed in."""
        self._user = user
        # name and email are cleaned by the model; the id is not: clean it all once more.
        label = " ".join(clean_text(user.name or user.email or user.id).split())
        self.query_one("#header-user", Static).update(Text(label))

    @property
    def user_label(self) -> str:
        """Who the header says is signed in (plain text; empty until status arrived)."""
        for widget in self.query("#header-user").results(Static):
            return str(widget.content)
        return ""

    def set_usage(self, usage: tuple[UsageMeter, ...] | list[UsageMeter]) -> None:
        """Show usage meters (§4 status and talkie.usage)."""
        self._usage = tuple(usage)
        line = Text()
        for index, meter in enumerate(self._usage):
            if index:
                line.append("  ")
            line.append_text(format_meter(meter))
        self.query_one("#header-usage", Static).update(line)

    def set_logo(self, data: bytes | None) -> None:
        """Draw the server's brand logo where there is room."""
        self.query_one(LogoView).set_data(data)

    def on_resize(self, event: Resize) -> None:
        """Keep the logo only in wide terminals."""
        self.set_class(event.size.width < WIDE, "-narrow")

    def set_activity(self, text: str) -> None:
        """Show background work such as a download's progress (empty to clear)."""
        self.query_one("#header-activity", Static).update(Text(text))

    def watch_state(self, state: str) -> None:
        """Show the connection state."""
        if not self.is_mounted:
            return
        widget = self.query_one("#header-state", Static)
        label = _STATE_LABELS.get(state)
        text = _(label) if label is not None else state
        if state == "reconnecting":
            text = text.format(seconds=self.waited)  # how long the answer has been awaited
        elif state == "offline" and self._offline is not None:
            since, seconds = self._offline
            text = _(OFFLINE_SINCE).format(since=since, seconds=seconds)
        widget.update(Text(text))
        for name in _STATE_LABELS:
            widget.set_class(name == state, f"-{name}")

    def set_offline(self, since: str, next_try_in: int) -> None:
        """Since when the server has not answered, and the seconds until the next try."""
        self._offline = (since, next_try_in)
        if self.state == "offline":
            self.watch_state(self.state)

    def watch_waited(self, seconds: int) -> None:
        """Count the seconds of a wait for a broken stream's answer."""
        if self.state == "reconnecting":
            self.watch_state(self.state)

    def watch_pending_actions(self, count: int) -> None:
        """Show how many actions wait for a decision."""
        if not self.is_mounted:
            return
        label = (
            ngettext("⚑ {count} pending", "⚑ {count} pending", count).format(count=count)
            if count
            else ""
        )
        self.query_one("#header-pending", Static).update(Text(label))
