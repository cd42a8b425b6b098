"""Unexpected exceptions: a crash report, the drafts saved, a screen instead of a traceback.

Textual's default is to leave the application and print a traceback with local variables
(which may hold tokens and what the user typed). `CrashGuard` writes the traceback, redacted,
to a crash report in the log folder, has every screen save its drafts, and shows
`CrashScreen`: quit (the terminal is restored and one line says where the report is), or go
on. A failure while that screen is up, or before any screen exists, quits the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import App

from talkie_tui import __version__
from talkie_tui.i18n import _
from talkie_tui.logs import write_crash_report
from talkie_tui.protocol.sanitize import clean_text

from .screens.crash import CrashScreen

__all__ = ["CrashGuard", "describe_error"]

MAX_SUMMARY = 300


def describe_error(error: BaseException) -> str:
    """The exception's type and message on one clean line (it may quote server text)."""
    message = clean_text(str(error)).replace("\n", " ").strip()
    summary = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return summary if len(summary) <= MAX_SUMMARY else summary[: MAX_SUMMARY - 1] + "…"


class CrashGuard(App[None]):
    """An App that reports unexpected exceptions calmly instead of printing a traceback."""

    crash_report: Path | None = None
    """The crash report of the last unexpected error, if one was written."""

    def _handle_exception(self, error: Exception) -> None:
        # Textual offers no public hook for this: every unhandled exception (handlers,
        # workers, compose) reaches this method, which by default exits with a traceback.
        self._return_code = 1
        if self._exception is None:
            # Kept as Textual does, so `run_test` still re-raises it for the test framework.
            self._exception = error
            self._exception_event.set()
        first = not isinstance(self.screen_stack[-1] if self.screen_stack else None, CrashScreen)
        self.crash_report = write_crash_report(error, __version__)
        self._preserve()
        summary = describe_error(error)
        if not first or not self.is_running or not self.screen_stack:
            self._leave(summary)
            return
        try:
            self.push_screen(CrashScreen(summary, self.crash_report), self._after_crash(summary))
        except Exception:  # the screen itself failed: leave quietly
            self._leave(summary)

    def _after_crash(self, summary: str) -> Callable[[bool | None], None]:
        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self._leave(summary)

        return answered

    def _preserve(self) -> None:
        """Let every screen save what the user would not want to lose (drafts)."""
        for screen in self.screen_stack:
            preserve = getattr(screen, "preserve", None)
            if callable(preserve):
                with contextlib.suppress(Exception):
                    preserve()

    def _leave(self, summary: str) -> None:
        """Exit with code 1; after the terminal is restored, one message says what to do."""
        if self.crash_report is not None:
            where = _("The details are in {path}.").format(path=self.crash_report)
        else:
            where = _("The details could not be written to the log folder.")
        message = _("talkie stopped after an unexpected error ({summary}). {where}")
        text = message.format(summary=summary, where=where)
        self.exit(return_code=1, message=Text(text))
