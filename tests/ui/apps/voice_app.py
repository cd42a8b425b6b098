"""Voice bars with fixed values (status, level, clocks), so snapshots draw the same every run."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from talkie_tui.ui.widgets.voice_bar import VoiceBar
from talkie_tui.voice.call_updates import CallState, CallStatus, TalkMode
from tests.ui.apps.connect_app import stylesheets

NOW = 1000.0  # the monotonic clock the bars are drawn at
ELAPSED = 83.0  # 01:23 into the call
REMAINING = 840.0  # the server's last figure: 14 minutes of voice left
CONSENT_LEFT = 12.0


def fixed_status(state: CallState, mode: TalkMode = "push_to_talk") -> CallStatus:
    """A status as the call reports it; a consent window closes CONSENT_LEFT after NOW."""
    consent = state == "consent"
    return CallStatus(
        state,
        mode,
        elapsed=ELAPSED,
        remaining=REMAINING,
        consent_deadline=NOW + CONSENT_LEFT if consent else None,
        consent_action="a_77" if consent else None,
    )


def fixed_bar(
    state: CallState,
    mode: TalkMode = "push_to_talk",
    *,
    level: float = 0.5,
    tool: str = "",
    heard: str = "",
) -> VoiceBar:
    """A voice bar frozen at NOW, in Czech consent words."""
    bar = VoiceBar(
        None if state == "connecting" else fixed_status(state, mode),
        level=level,
        elapsed=0.0 if state == "connecting" else ELAPSED,
        now=NOW,
        max_seconds=900.0,
        consent_words=("ano, odeslat", "ne"),
    )
    bar.tool_label = tool
    bar.heard = heard
    return bar


def every_state() -> list[tuple[str, VoiceBar]]:
    """One bar per state (and mode), with a tool running and an explanation where they show."""
    return [
        ("connecting", fixed_bar("connecting", level=0.0)),
        ("listening", fixed_bar("listening", level=0.0)),
        ("listening, hands-free", fixed_bar("listening", "hands_free", level=0.2)),
        ("talking", fixed_bar("talking", level=0.8)),
        ("assistant speaking", fixed_bar("assistant_speaking", level=0.0)),
        ("tool running", fixed_bar("assistant_speaking", level=0.0, tool="Hledám v CRM…")),
        ("consent", fixed_bar("consent", level=0.0)),
        (
            "consent, after a hesitation",
            fixed_bar(
                "consent", level=0.0, heard="Heard “asi ano”: not a confirmation (hesitation)"
            ),
        ),
        ("ended", fixed_bar("ended", level=0.0)),
    ]


class VoiceBarsApp(App[None]):
    """Every state of the voice bar, one under the other."""

    CSS_PATH = stylesheets("voice")  # type: ignore[assignment]
    CSS = "VoiceBar { margin-bottom: 1; }"

    def get_css_variables(self) -> dict[str, str]:
        """The brand colour the chat app would take from the server."""
        return {**super().get_css_variables(), "server-accent": "#0b7a75"}

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            for _, bar in every_state():
                yield bar
