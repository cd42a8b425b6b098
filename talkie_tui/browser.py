"""Opening a web page for the person, only where a graphical browser will show it.

A console browser (w3m, lynx…) would take over the terminal talkie draws on, and over SSH a
browser would open on the wrong machine, so in those cases nothing is opened and the caller
shows the URL instead. Used for links (on a gesture) and for signing in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import webbrowser
from pathlib import Path

from talkie_tui.i18n import _

__all__ = [
    "CONSOLE_BROWSERS",
    "NONE",
    "browser_description",
    "graphical_browser_available",
    "open_url",
]

NONE = "none: "
"""How `browser_description` starts when no browser will be opened (a marker callers test for,
never translated); the reason after it is in the UI's language."""
CONSOLE_BROWSERS = frozenset({"www-browser", "links", "links2", "elinks", "lynx", "w3m", "browsh"})


def _is_wsl() -> bool:
    try:
        return (
            "microsoft"
            in Path("/proc/version").read_text(encoding="ascii", errors="ignore").lower()
        )
    except OSError:
        return False


def _over_ssh() -> bool:
    return bool(os.environ.get("SSH_CONNECTION") or os.environ.get("SSH_TTY"))


def _console_browser_chosen() -> bool:
    # $BROWSER is a list of commands separated by os.pathsep; the first one wins.
    chosen = os.environ.get("BROWSER", "").split(os.pathsep)[0].split(" ")[0]
    return os.path.basename(chosen) in CONSOLE_BROWSERS


def graphical_browser_available() -> bool:
    """True when a graphical browser is likely (never a console one, never over SSH)."""
    if _console_browser_chosen():
        return False
    if sys.platform.startswith("linux") and _is_wsl():
        return shutil.which("wslview") is not None or shutil.which("powershell.exe") is not None
    needs_display = sys.platform.startswith("linux") or "bsd" in sys.platform
    if needs_display:
        if _over_ssh() or not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            return False
    elif _over_ssh():
        return False
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    name = os.path.basename(getattr(browser, "name", "") or "")
    return name not in CONSOLE_BROWSERS


def browser_description() -> str:
    """Which browser a sign-in would open, in words (for `talkie doctor` and the sign-in screen)."""
    if _console_browser_chosen():
        return NONE + _("$BROWSER names a text browser, which would take over the terminal")
    if _over_ssh():
        return NONE + _("this is an SSH session, so the browser would open on the wrong machine")
    if not graphical_browser_available():
        return NONE + _("no graphical display was found")
    if sys.platform.startswith("linux") and _is_wsl():
        return _("the Windows browser (through WSL)")
    try:
        name = getattr(webbrowser.get(), "name", "") or _("the default browser")
    except webbrowser.Error:  # pragma: no cover - checked by graphical_browser_available
        return NONE.rstrip(": ")
    return str(name)


def open_url(url: str) -> bool:
    """Open `url` in a graphical browser; False when there is none (the caller shows the URL).

    Call it from a worker thread: some browsers block until they have started.
    """
    if not graphical_browser_available():
        return False
    if sys.platform.startswith("linux") and _is_wsl():
        command = (
            ["wslview", url]
            if shutil.which("wslview")
            else ["powershell.exe", "-NoProfile", "-Command", "Start-Process", url]
        )
        try:
            # A fixed program and the URL as one argument: no shell is involved.
            done = subprocess.run(command, check=False, timeout=15, capture_output=True)  # noqa: S603
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0
    try:
        return webbrowser.open(url, new=2)
    except webbrowser.Error:
        return False
