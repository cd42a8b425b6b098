"""Which stylesheets load when: the first frame's with the app, a screen's own with it, the
chat's with it.

Textual parses every stylesheet the app names before its first frame, and matches every rule
against each widget it styles: the twenty sheets of the whole UI cost the first frame about
as much as the rest of the start (issue 24). The app names the sheets of its first frame (the
connect screen, the chat drawn first); the screens that may show before a chat (the sign-in
screens, help, a confirmation, the crash screen) name their own, which Textual loads when one
is first shown, and the app loads them with the chat's (one parse for all); the chat screen
names the others (over it come the screens that use them: the pickers, devices, a hub's
screens).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "STYLES",
    "chat_stylesheets",
    "own_stylesheet",
    "screen_stylesheets",
    "startup_stylesheets",
]

STYLES = Path(__file__).parent.parent / "styles"
_FIRST_FRAME = frozenset({"app", "connect", "logo"})
_OWN = frozenset(
    {"confirm", "crash", "email_sign_in", "help", "sign_in", "store_choice", "token_prompt"}
)
"""The sheets of one screen each that may show before a chat."""


def startup_stylesheets() -> list[Path]:
    """app.tcss first, then the other sheets of the first frame, in name order."""
    sheets = [path for path in sorted(STYLES.glob("*.tcss")) if path.stem in _FIRST_FRAME]
    return sorted(sheets, key=lambda path: path.name != "app.tcss")


def own_stylesheet(name: str) -> list[Path]:
    """The sheet of one screen that may show before a chat (`help` for the help screen)."""
    if name not in _OWN:
        raise ValueError(f"{name}.tcss is not a screen's own sheet")
    return [STYLES / f"{name}.tcss"]


def screen_stylesheets() -> list[Path]:
    """Every screen's own sheet, in name order."""
    return [STYLES / f"{name}.tcss" for name in sorted(_OWN)]


def chat_stylesheets() -> list[Path]:
    """The sheets of the chat and what comes over it, in name order."""
    loaded = _FIRST_FRAME | _OWN
    return [path for path in sorted(STYLES.glob("*.tcss")) if path.stem not in loaded]
