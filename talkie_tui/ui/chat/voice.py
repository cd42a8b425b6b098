"""What the call controller and the voice bar share: keys, the audio factory, words for updates.

Nothing here imports the voice stack (aiortc, PyAV, numpy): `talkie_tui.voice` is imported only
when a call starts (DESIGN: heavy parts load when used). Types from it are for checkers only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.message import Message

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _

if TYPE_CHECKING:
    from talkie_tui.chat.vocabulary import Action
    from talkie_tui.voice.audio import AudioPair
    from talkie_tui.voice.call import VoiceCall
    from talkie_tui.voice.call_updates import CallUpdate
    from talkie_tui.voice.consent import Heard

__all__ = [
    "BARGE_IN_KEY",
    "CALL_KEY",
    "MODE_KEY",
    "TALK_KEYS",
    "TALK_KEY_LEGACY",
    "VoiceOptions",
    "VoiceUpdate",
    "consent_phrase",
    "describe_heard",
    "make_audio",
    "talk_bindings",
]

# Keys: function keys reach the application in every terminal, over SSH and inside tmux.
# Textual reports no key release, so one key toggles talking. TextArea binds F6 and F7 (select
# line / all): the voice bindings are priority bindings that apply only while a call is on, so
# outside a call the composer keeps them. Ctrl+Space is the second talk key (Space alone would
# type into the composer); macOS may take it for switching input sources, F6 always works.
CALL_KEY = "f5"
TALK_KEYS = "f6,ctrl+space"
TALK_KEY_LEGACY = "ctrl+@"  # what Ctrl+Space arrives as where the kitty protocol is off
MODE_KEY = "f7"
BARGE_IN_KEY = "escape"


def talk_bindings(action: str, description: str) -> list[Binding]:
    """The talk keys bound to `action`, the legacy Ctrl+Space hidden from the footer.

    Priority: the composer (a TextArea) binds F6 itself; the screen says when these apply."""
    return [
        Binding(TALK_KEYS, action, description, priority=True),
        Binding(
            TALK_KEY_LEGACY,
            action,
            description,
            key_display="Ctrl+Space",
            show=False,
            priority=True,
        ),
    ]


@dataclass(frozen=True, slots=True)
class VoiceOptions:
    """The settings a call uses: audio devices, half-duplex and the development switch."""

    input_device: str | None = None
    output_device: str | None = None
    half_duplex: bool = False
    allow_http_signaling: bool = False
    """Development switch: a provider on this computer may be reached over plain http."""


def make_audio(options: VoiceOptions) -> AudioPair:
    """The microphone and speaker of a call (not yet started); tests replace this function."""
    from talkie_tui.voice.audio import device_audio

    return device_audio(
        options.input_device, options.output_device, half_duplex=options.half_duplex
    )


class VoiceUpdate(Message):
    """A `CallUpdate` of a call, delivered to the chat screen through its message queue."""

    def __init__(self, call: VoiceCall, update: CallUpdate) -> None:
        super().__init__()
        self.call = call
        self.update = update


# The words to say follow the call's language (what the assistant speaks), not the UI's.
_YES = {"cs": ("ano", "ne")}
_ENGLISH = ("yes", "no")


def _words(locale: str | None) -> tuple[str, str]:
    language = (locale or "").split("-")[0].split("_")[0].lower()
    return _YES.get(language, _ENGLISH)


def consent_phrase(action: Action | None, locale: str | None) -> tuple[str, str]:
    """What to say to confirm ("ano, odeslat") and to cancel ("ne"), in the call's language."""
    yes, no = _words(locale)
    voice = action.confirm.voice if action is not None else None
    keyword = clean_text(voice.keyword).strip() if voice is not None and voice.keyword else ""
    return (f"{yes}, {keyword}" if keyword else yes), no


_REASONS = {
    "empty": N_("nothing to understand"),
    "too_long": N_("too long for a confirmation"),
    "question": N_("a question"),
    "hesitation": N_("hesitation"),
    "condition": N_("a condition or a change"),
    "conflict": N_("both yes and no"),
    "negation": N_("a negation"),
    "no_confirm_word": N_("no confirmation word"),
    "keyword_missing": N_("the action's keyword is missing"),
}
_IGNORED = {
    "closed": N_("the confirmation window had closed"),
    "duplicate": N_("heard twice"),
    "not_in_window": N_("said while the assistant was still speaking"),
    "unknown_item": N_("it started before the confirmation window"),
    "empty": N_("nothing to understand"),
}


def describe_heard(heard: Heard) -> str | None:
    """One line on an utterance the consent window did not take; None when it decided."""
    said = " ".join(clean_text(heard.transcript).split())
    if len(said) > 60:
        said = said[:59] + "…"
    if heard.ignored is not None:
        ignored = heard.ignored
        why = _(_IGNORED[ignored]) if ignored in _IGNORED else ignored
        return _("Heard “{said}”: not counted ({why})").format(said=said, why=why)
    verdict = heard.verdict
    if verdict is None or verdict.outcome != "neither":
        return None
    reason = verdict.reason
    why = _(_REASONS[reason]) if reason in _REASONS else reason.replace("_", " ")
    return _("Heard “{said}”: not a confirmation ({why})").format(said=said, why=why)
