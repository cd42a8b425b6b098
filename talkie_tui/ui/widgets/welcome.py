"""The first screen of a new thread: who the server is, what it offers, and the keys to start.

A UI-only widget: it is not a part of the conversation (so never in an export), the transcript
shows it while a thread has no turns and removes it with the first one. The server's name and
description are data: cleaned of control sequences and shown as plain text, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from talkie_tui.backends.base import ServerInfo
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.ui.chat.voice import CALL_KEY
from talkie_tui.ui.screens.help import describe_key

__all__ = ["Welcome", "WelcomePanel"]

MAX_DESCRIPTION = 400  # characters of the server's description shown; a manifest may hold 64 kB
HELP_KEY = "f1"
PALETTE_KEY = "ctrl+p"
ATTACH_KEY = "ctrl+f"
DICTATE_KEY = "f6"
PENDING_KEY = "ctrl+o"


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Welcome:
    """What the panel shows; built from the manifest, then told whether voice is allowed."""

    name: str
    description: str = ""
    voice: bool = False  # the server has voice calls (`capabilities.voice` and its endpoints)
    actions: bool = False  # the agent proposes actions a person confirms (`capabilities.actions`)
    voice_confirm: bool = False  # an action may be confirmed by voice too
    questions: bool = False  # the agent may ask back (choices, confirmations, text, secrets)
    attachments: bool = False  # files go with a message
    search: bool = False  # the server searches the messages of every thread
    models: bool = False  # a model is chosen per thread
    dictation: bool = False  # push-to-talk: speech becomes text in the composer
    voice_notes: bool = False  # push-to-talk records a voice note; notes play
    buttons: bool = False  # the agent's messages carry buttons and quick replies
    devices: bool = False  # the person's signed-in devices are listed in the palette
    newline_key: str = "ctrl+j"
    voice_allowed: bool | None = None  # `status.voice` for the signed-in person; None: not known

    @classmethod
    def from_info(cls, info: ServerInfo, *, newline_key: str = "ctrl+j") -> Welcome:
        """The panel of the server `info` describes."""
        offers = info.capabilities
        return cls(
            name=info.name,
            description=info.description,
            voice=offers.voice,
            actions=offers.actions,
            voice_confirm=offers.voice and offers.actions_by_voice,
            questions=offers.questions,
            attachments=offers.attachments,
            search=offers.search,
            models=offers.models,
            dictation=offers.dictation,
            voice_notes=offers.voice_notes,
            buttons=offers.buttons,
            devices=offers.devices,
            newline_key=newline_key,
        )

    @property
    def call_key(self) -> bool:
        """True when the call key starts a call now (voice offered and allowed)."""
        return self.voice and self.voice_allowed is True

    def offer_lines(self) -> list[str]:
        """What the server offers, one line each."""
        lines = []
        if self.voice:
            if self.voice_allowed is False:
                lines.append(_("Voice calls (not enabled for your account)"))
            else:
                lines.append(_("Voice calls: talk with the agent through your microphone"))
        if self.actions:
            if self.voice_confirm:
                lines.append(
                    _(
                        "Actions: proposed by the agent, done only after you confirm "
                        "(by key or voice)"
                    )
                )
            else:
                lines.append(_("Actions: proposed by the agent, done only after you confirm"))
        if self.questions:
            lines.append(
                _("Questions: the agent may ask you back, and confirms with you before it acts")
            )
        if self.attachments:
            lines.append(_("Files: images, PDFs, spreadsheets and documents with a message"))
        if self.search:
            lines.append(_("Search: the thread list finds words in every message"))
        if self.models:
            lines.append(_("Models: choose one per thread in the command palette"))
        if self.dictation:
            lines.append(_("Dictation: speak, check the text, then send it"))
        if self.voice_notes:
            lines.append(_("Voice notes: record one to send, play the ones you get with Enter"))
        if self.buttons:
            lines.append(_("Buttons: the agent's choices and quick replies, taken with a key"))
        if self.devices:
            lines.append(_("Devices: see where you are signed in, in the command palette"))
        return lines

    def key_rows(self) -> list[tuple[str, str]]:
        """The keys that matter to start, as (key, what it does)."""
        rows = [
            (
                describe_key("enter"),
                _("Send the message ({newline} adds a new line)").format(
                    newline=describe_key(self.newline_key)
                ),
            )
        ]
        if self.call_key:
            rows.append((describe_key(CALL_KEY), _("Start a voice call")))
        if self.attachments:
            rows.append((describe_key(ATTACH_KEY), _("Attach a file")))
        if self.dictation:
            rows.append((describe_key(DICTATE_KEY), _("Dictate a message")))
        if self.voice_notes:
            rows.append((describe_key(DICTATE_KEY), _("Record a voice note")))
        if self.buttons:
            rows.append((describe_key(PENDING_KEY), _("Go to the agent's buttons")))
        rows.append((describe_key(HELP_KEY), _("Help and all keys")))
        rows.append((describe_key(PALETTE_KEY), _("Command palette")))
        return rows


class WelcomePanel(Vertical):
    """The start of a new thread; renders a `Welcome`, does no I/O."""

    welcome: reactive[Welcome] = reactive(Welcome(""), recompose=True)

    def __init__(self, welcome: Welcome, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.set_reactive(WelcomePanel.welcome, welcome)

    def compose(self) -> ComposeResult:
        welcome = self.welcome
        yield Static(Content(clean_text(welcome.name)), classes="welcome--name")
        description = clean_text(welcome.description).strip()
        if description:
            yield Static(
                Content(_shorten(description, MAX_DESCRIPTION)), classes="welcome--description"
            )
        if offers := welcome.offer_lines():
            yield Static(Content(_("This server offers")), classes="welcome--heading")
            with Grid(classes="welcome--offers"):
                for line in offers:
                    yield Static(Content("•"), classes="welcome--bullet")
                    yield Static(Content(line), classes="welcome--offer")
        yield Static(Content(_("To start")), classes="welcome--heading")
        with Grid(classes="welcome--keys"):
            for key, what in welcome.key_rows():
                yield Static(Content(key), classes="welcome--key")
                yield Static(Content(what), classes="welcome--what")
