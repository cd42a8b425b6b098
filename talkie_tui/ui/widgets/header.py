"""The chat header: server name and logo, signed-in user, usage meters, connection state.

One line holds it all, so it shortens by priority rather than cutting: the connection state
and the count of pending decisions always show whole (in a shorter wording below ROOMY and
WIDE columns); the usage meters lose their bars first, then whole meters from the end; the logo and
the user go below WIDE; a long server name ends in an ellipsis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.events import Resize
from textual.reactive import reactive
from textual.widgets import Static

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _, ngettext
from talkie_tui.ui.widgets.logo import LogoView

# Types only: the chat drawn before the server answers (`JoiningScreen`) loads no wire model.
if TYPE_CHECKING:
    from talkie_tui.chat.vocabulary import UsageMeter, User

__all__ = ["ConnectionState", "TalkieHeader", "UsageLine", "fit_meters", "format_meter"]

WIDE = 100  # columns from which the header has room for the logo
ROOMY = 130  # columns from which the connection state has room for its long wording

ConnectionState = Literal[
    "connected", "streaming", "reconnecting", "resuming", "offline", "connecting"
]
"""`reconnecting`: an answer's stream broke and its answer is awaited; `resuming`: a live
connection (a hub's socket) dropped between answers and comes back by itself."""

_STATE_LABELS: dict[str, str] = {
    "connecting": N_("◌ connecting…"),
    "connected": N_("● connected"),
    "streaming": N_("◉ answering…"),
    "reconnecting": N_("◌ reconnecting… {seconds} s · Esc stops waiting"),
    "offline": N_("○ offline"),
    "resuming": N_("◌ reconnecting…"),
}
OFFLINE_SINCE = N_("○ offline since {since} · next try in {seconds} s")
# Below ROOMY columns: the same facts in fewer cells.
_NARROW_LABELS: dict[str, str] = {
    "reconnecting": N_("◌ reconnecting… {seconds} s"),
}
NARROW_OFFLINE_SINCE = N_("○ offline {since} · retry in {seconds} s")
BAR_WIDTH = 6
METER_GAP = "  "


def _short(number: float) -> str:
    if number >= 1_000_000:
        return f"{number / 1_000_000:.1f}M".replace(".0M", "M")
    if number >= 10_000:
        return f"{number / 1000:.0f}k"
    if number >= 1000:
        return f"{number / 1000:.1f}k".replace(".0k", "k")
    return f"{number:g}"


def format_meter(meter: UsageMeter, bar_width: int = BAR_WIDTH) -> Text:
    """`Tokens today ▰▰▱▱▱▱ 12k/400k` — a compact usage meter (plain text, never markup);
    `bar_width` 0 leaves the bar out."""
    text = Text(f"{meter.label} ", style="dim")
    if meter.limit:
        ratio = meter.used / meter.limit
        # Absurd figures (1e308 over 1e-308 is infinite) must not break the header.
        ratio = min(max(ratio, 0.0), 1.0) if math.isfinite(ratio) else 1.0
        filled = round(bar_width * ratio)
        style = "red" if ratio >= 0.9 else "yellow" if ratio >= 0.7 else "green"
        if bar_width:
            text.append("▰" * filled, style=style)
            text.append("▱" * (bar_width - filled), style="dim")
            text.append(" ")
        text.append(
            f"{_short(meter.used)}/{_short(meter.limit)}",
            style=style if not bar_width and ratio >= 0.7 else "",
        )
    else:
        text.append(_short(meter.used))
    if meter.unit and not meter.limit:
        text.append(f" {meter.unit}", style="dim")
    return text


def fit_meters(meters: tuple[UsageMeter, ...], width: int) -> Text:
    """As much of the meters as fits `width` cells whole: all with their bars, else all
    without, else the first ones without (a meter is never cut in the middle of a number)."""
    tries = [(BAR_WIDTH, len(meters))] + [(0, count) for count in range(len(meters), 0, -1)]
    for bar_width, count in tries:
        line = Text(METER_GAP).join(format_meter(m, bar_width) for m in meters[:count])
        if line.cell_len <= width:
            return line
    return Text()


class UsageLine(Static):
    """The header's usage meters, fitted to the room the line leaves them."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.meters: tuple[UsageMeter, ...] = ()

    def show(self, meters: tuple[UsageMeter, ...]) -> None:
        """Show these meters (drawn again at each width)."""
        self.meters = meters
        self.refresh()

    def render(self) -> Text:
        """The meters that fit this width."""
        return fit_meters(self.meters, self.content_size.width)


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
        yield UsageLine(id="header-usage")
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
        self.query_one(UsageLine).show(self._usage)

    def set_logo(self, data: bytes | None) -> None:
        """Draw the server's brand logo where there is room."""
        self.query_one(LogoView).set_data(data)

    def on_resize(self, event: Resize) -> None:
        """Keep the logo only in wide terminals; below, the shorter wordings."""
        narrow, roomy = event.size.width < WIDE, event.size.width >= ROOMY
        if (narrow, roomy) != (self.has_class("-narrow"), self.has_class("-roomy")):
            self.set_class(narrow, "-narrow")
            self.set_class(roomy, "-roomy")
            self.watch_state(self.state)
            self.watch_pending_actions(self.pending_actions)

    def set_activity(self, text: str) -> None:
        """Show background work such as a download's progress (empty to clear)."""
        self.query_one("#header-activity", Static).update(Text(text))

    def watch_state(self, state: str) -> None:
        """Show the connection state."""
        if not self.is_mounted:
            return
        widget = self.query_one("#header-state", Static)
        narrow = not self.has_class("-roomy")
        label = (narrow and _NARROW_LABELS.get(state)) or _STATE_LABELS.get(state)
        text = _(label) if label else state
        if state == "reconnecting":
            text = text.format(seconds=self.waited)  # how long the answer has been awaited
        elif state == "offline" and self._offline is not None:
            since, seconds = self._offline
            wording = NARROW_OFFLINE_SINCE if narrow else OFFLINE_SINCE
            text = _(wording).format(since=since, seconds=seconds)
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
        if not count:
            label = ""
        elif self.has_class("-narrow"):
            label = f"⚑ {count}"
        else:
            label = ngettext("⚑ {count} pending", "⚑ {count} pending", count).format(count=count)
        self.query_one("#header-pending", Static).update(Text(label))
