"""Which stylesheets load when: those of the first screens with the app, the chat's with it.

Textual parses every stylesheet the app names before its first frame, and matches every rule
against each widget it styles: the twenty sheets of the whole UI cost the first frame about
as much as the rest of the start (issue 24). The app names the sheets of what can show before
a chat (the connect screen, the chat drawn first, the sign-in screens, help, a confirmation,
the crash screen); the chat screen names the others, which Textual loads when it is first
shown (over it come the screens that use them: the pickers, devices, a hub's screens).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STYLES", "chat_stylesheets", "startup_stylesheets"]

STYLES = Path(__file__).parent.parent / "styles"
_STARTUP = frozenset(
    {
        "app",
        "confirm",
        "connect",
        "crash",
        "email_sign_in",
        "help",
        "logo",
        "sign_in",
        "store_choice",
        "token_prompt",
    }
)


def startup_stylesheets() -> list[Path]:
    """app.tcss first, then the other sheets of the screens before a chat, in name order."""
    sheets = [path for path in sorted(STYLES.glob("*.tcss")) if path.stem in _STARTUP]
    return sorted(sheets, key=lambda path: path.name != "app.tcss")


def chat_stylesheets() -> list[Path]:
    """The sheets of the chat and what comes over it, in name order."""
    return [path for path in sorted(STYLES.glob("*.tcss")) if path.stem not in _STARTUP]
