"""Above the composer while the next message answers an earlier one: "↩ Replying to Agent: the
start of its text…" and ✕ to write an ordinary message again (Esc does the same).

The quote is server text: cleaned of control sequences and placed as plain `Content`, never
read as markup; the colours live in composer_extras.tcss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from markdown_it import MarkdownIt
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

from talkie_tui.chat.turns import AttachmentPart, NoticePart, Turn
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

__all__ = ["PREVIEW_CHARS", "ReplyBar", "ReplyTarget", "reply_target"]

PREVIEW_CHARS = 80
"""The most characters of the answered message the quote shows (the bar cuts it to its width)."""
REPLY_MARK = "↩"
_MARKDOWN = MarkdownIt("commonmark")


def plain_words(markdown: str) -> str:
    """The words of a Markdown text as a reader sees them: no `**`, `#` or link targets."""
    pieces: list[str] = []
    for token in _MARKDOWN.parse(markdown):
        if token.type == "inline":
            for child in token.children or ():
                if child.type in ("text", "code_inline"):
                    pieces.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    pieces.append(" ")
        elif token.type in ("fence", "code_block"):
            pieces.append(token.content)
        if token.block and token.nesting <= 0:
            pieces.append(" ")  # blocks end with a space, not run together
    return " ".join("".join(pieces).split())


@dataclass(frozen=True, eq=False)
class ReplyTarget:
    """The message the next one answers: its turn (whose id is read when the message goes: a
    message of the person gets the server's id once it is stored) and what the quote shows."""

    turn: Turn
    preview: str

    @property
    def message_id(self) -> str:
        """The id of the message answered, as the server knows it now."""
        return self.turn.id


def reply_target(turn: Turn) -> ReplyTarget | None:
    """What a reply to `turn` quotes; None for a turn that is no message one can answer (a
    notice of the app, a message that was not delivered)."""
    if turn.state == "failed" or all(isinstance(part, NoticePart) for part in turn.parts):
        return None
    words = plain_words(clean_text(turn.text))
    if not words:
        files = [part.filename for part in turn.parts if isinstance(part, AttachmentPart)]
        words = " ".join(clean_text(", ".join(files)).split())
    if len(words) > PREVIEW_CHARS:
        words = words[: PREVIEW_CHARS - 1].rstrip() + "…"
    return ReplyTarget(turn, words)


def _who(turn: Turn) -> str:
    """How the quote starts ("Replying to …: ") for the author of `turn`."""
    if turn.role == "user":
        return _("Replying to your message: ")
    author = clean_text(turn.author or "") or _("Agent")
    return _("Replying to {sender}: ").format(sender=author)


class ReplyBar(Horizontal):
    """The quote of the message the next one answers, and ✕; hidden while there is none."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"reply-bar--mark", "reply-bar--who"}

    class CancelRequested(Message):
        """The person pressed ✕: the next message answers nothing."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.target: ReplyTarget | None = None
        self._quote = Static(classes="reply-bar--quote")

    def compose(self) -> ComposeResult:
        yield self._quote
        yield Button("✕", classes="reply-bar--cancel", tooltip=_("Cancel the reply (Esc)"))

    def on_mount(self) -> None:
        self.display = self.target is not None

    def show_target(self, target: ReplyTarget | None) -> None:
        """Quote `target` (None: hide the bar)."""
        self.target = target
        self.display = target is not None
        self._quote.update(self.quote())

    def quote(self) -> Content:
        """`↩ Replying to Agent: the start of its text…` as plain text (never markup)."""
        target = self.target
        if target is None:
            return Content("")
        return Content.assemble(
            (f"{REPLY_MARK} ", self.get_visual_style("reply-bar--mark")),
            (_who(target.turn), self.get_visual_style("reply-bar--who")),
            target.preview or _("(a message)"),
        )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.CancelRequested())
