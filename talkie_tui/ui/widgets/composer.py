"""The composer: Enter sends, Ctrl+J (or Shift/Alt+Enter where the terminal tells) adds a line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widgets import TextArea

from talkie_tui.i18n import _, ngettext, pgettext
from talkie_tui.ui.support.notify import notify_plain
from talkie_tui.ui.widgets.pasted_paths import pasted_path

__all__ = ["Composer"]

# Ctrl+J works in every terminal; the others only where the terminal reports them.
NEWLINE_KEYS = frozenset({"ctrl+j", "shift+enter", "alt+enter", "ctrl+enter"})


def _grouped(number: int) -> str:
    """`number` with its thousands grouped as the UI's language writes them (1,234 / 1 234)."""
    return f"{number:,}".replace(",", pgettext("thousands separator", ","))


class Composer(TextArea):
    """A multi-line message box that counts characters against the server's limit."""

    class Submitted(Message):
        """The person pressed Enter on a message that fits the limit."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class PathPasted(Message):
        """The person pasted the path of an existing file (only with `offer_paths`)."""

        def __init__(self, path: Path, text: str) -> None:
            super().__init__()
            self.path = path
            self.text = text  # what was pasted: typed in after all when the offer is declined

    offer_paths = False
    """True where the server takes files: a pasted path of a file is offered as an attachment."""

    def __init__(self, *, max_chars: int, newline_key: str = "ctrl+j", **kwargs: object) -> None:
        super().__init__(soft_wrap=True, tab_behavior="focus", show_line_numbers=False, **kwargs)  # type: ignore[arg-type]
        self.max_chars = max_chars
        self.sends_without_text: Callable[[], bool] = lambda: False
        """True when Enter sends an empty message: something waits to go (a voice note)."""
        self._newline_keys = NEWLINE_KEYS | {newline_key}
        self.border_title = _("Message")
        self._note_title = _("Message")
        self._update_counter()

    def set_note(self, note: str) -> None:
        """Name what goes with the next message in the title (the model chosen), or nothing."""
        title = _("Message")
        text = f"{title} · {note}" if note else title
        # Setting a title repaints the whole composer; it is asked for after every streamed
        # delta, so only a title that changed is set.
        if text == self._note_title:
            return
        self._note_title = text
        # Content, not a str: a str title is read as markup, and a model's name is server text.
        self.border_title = Content(text)

    async def _on_paste(self, event: events.Paste) -> None:
        # Textual runs TextArea's own paste handler after this one, unless prevented.
        path = pasted_path(event.text) if self.offer_paths else None
        if path is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.PathPasted(path, event.text))

    @property
    def over_limit(self) -> bool:
        """True when the text is longer than the server accepts (it would get a 413)."""
        return len(self.text) > self.max_chars

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._submit()
            return
        if event.key in self._newline_keys:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)

    def _submit(self) -> None:
        text = self.text
        if not text.strip() and not self.sends_without_text():
            return
        if self.over_limit:
            self.app.bell()
            count = len(text)
            notify_plain(
                self,
                ngettext(
                    "The message has {count} character; this server accepts {limit}. "
                    "Shorten it to send.",
                    "The message has {count} characters; this server accepts {limit}. "
                    "Shorten it to send.",
                    count,
                ).format(count=_grouped(count), limit=_grouped(self.max_chars)),
                severity="warning",
            )
            return
        self.post_message(self.Submitted(text))

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_counter()

    def _update_counter(self) -> None:
        count = len(self.text)
        self.border_subtitle = f"{_grouped(count)} / {_grouped(self.max_chars)}"
        self.set_class(self.over_limit, "-over-limit")
        self.set_class(count >= self.max_chars * 0.9, "-near-limit")
