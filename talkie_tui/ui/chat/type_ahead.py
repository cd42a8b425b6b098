"""Type-ahead: what the person types before the chat's composer exists goes into it, in order.

`talkie connect URL` and `talkie demo` open straight into a chat, and a person starts typing as
soon as the window appears, before the server has answered. Until the chat screen says its
composer is ready, the app holds every typed key (text, Enter, Backspace, a new line) that would
otherwise reach a screen that is only passing by: the default screen, a connect screen that is
connecting, a chat screen still mounting. Then the keys go to the composer in the order they
were typed; those typed after an Enter that sends wait until its message has left the composer
(which empties it). A screen drawn before the chat (`JoiningScreen`) shows what the held keys
will make of the composer. A screen that asks the person something (a sign-in, a connect screen
showing an error) takes its keys as usual; what was held before waits for the composer.

A key typed before talkie put the terminal in raw mode was read by the terminal's line
discipline, which turns Enter into a line feed: such a key arrives as Ctrl+J. Typed ahead, a
Ctrl+J is taken for the Enter it almost always was (a new line is Ctrl+J only once the screen is
up).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.widget import Widget

__all__ = ["TYPED_KEYS", "TypeAhead", "TypedAhead"]

TYPED_KEYS = frozenset({"enter", "backspace", "ctrl+j", "shift+enter"})
"""Keys kept besides printable characters: they edit or send the message being typed."""
COOKED_ENTER = "ctrl+j"
"""Enter as a terminal not yet in raw mode hands it on (a line feed)."""


@dataclass(frozen=True)
class TypedAhead:
    """What the held keys will make of the composer: the messages they send, then the text
    left in it."""

    sent: tuple[str, ...]
    text: str


def _typed(keys: list[events.Key]) -> TypedAhead:
    """What `keys` make of the composer, as `Composer` reads them: Enter sends a text that is
    not blank, Shift+Enter adds a line."""
    sent: list[str] = []
    text = ""
    for event in keys:
        if event.key == "enter":
            if text.strip():
                sent.append(text)
                text = ""
        elif event.key == "backspace":
            text = text[:-1]
        elif event.key == "shift+enter":
            text += "\n"
        elif event.character:
            text += event.character
    return TypedAhead(tuple(sent), text)


class TypeAhead:
    """The keys typed before the composer exists (inactive for an app that opens a picker)."""

    def __init__(self, active: bool) -> None:
        self._held: list[events.Key] = []
        self.waiting = active
        """True until the composer took the keys held for it."""
        self.on_change: Callable[[TypedAhead], None] | None = None
        """Told after every key held: a screen drawn before the chat shows what was typed."""
        self._composer: Widget | None = None

    @staticmethod
    def is_typed(event: events.Key) -> bool:
        """True for a key that types or sends text (not a command like Ctrl+Q or Esc)."""
        return event.is_printable or event.key in TYPED_KEYS

    def hold(self, event: events.Key) -> bool:
        """Keep `event` for the composer; True when it was kept (the caller drops it)."""
        if not self.waiting or not self.is_typed(event):
            return False
        if event.key == COOKED_ENTER:
            self._held.append(events.Key("enter", "\r"))
        else:
            self._held.append(events.Key(event.key, event.character))
        if self.on_change is not None:
            self.on_change(self.typed())
        return True

    def typed(self) -> TypedAhead:
        """What the composer will hold and send once the held keys reach it."""
        return _typed(self._held)

    @property
    def held(self) -> int:
        """How many keys wait for the composer."""
        return len(self._held)

    def release(self, composer: Widget) -> None:
        """Hand the held keys to `composer`, in order; later keys go to it directly.

        Up to the first Enter that sends: the keys typed after it wait until that message
        has left the composer (`sent`), which empties it, else they would be emptied too."""
        self._composer = composer
        self.on_change = None
        self._release_next()

    def sent(self) -> None:
        """The composer's message went (or was refused): the keys typed after it follow."""
        if self._composer is not None and self.waiting:
            self._release_next()

    def flush(self) -> None:
        """Hand on whatever is still held (an Enter that did not send: the text was too long)."""
        if self._composer is not None and self.waiting:
            held, self._held, self.waiting = self._held, [], False
            for event in held:
                self._composer.post_message(event)

    def _release_next(self) -> None:
        assert self._composer is not None
        keys = self._held
        cut = next((n for n in range(1, len(keys) + 1) if _typed(keys[:n]).sent), len(keys))
        chunk, self._held = self._held[:cut], self._held[cut:]
        self.waiting = bool(self._held)
        for event in chunk:
            self._composer.post_message(event)
