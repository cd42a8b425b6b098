"""Unexpected exceptions: a crash report, the drafts saved, a screen instead of a traceback.

Textual's default is to leave the application and print a traceback with local variables
(which may hold tokens and what the user typed). `CrashGuard` writes the traceback, redacted,
to a crash report in the log folder, has every screen save its drafts, and shows
`CrashScreen` with the report's path. Quitting restores the terminal and prints one line
saying where the report is.

How much can go on depends on where the error happened. A failing action (every key binding
and palette command is one) is caught around `run_action`, so nothing else is harmed and the
person may continue. Anywhere else Textual stops the message loop of the widget that failed,
so the screen offers only to quit; if that was the application's own loop, nothing can be
shown any more and talkie leaves at once with the same one line.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path

from rich.text import Text
from textual._context import active_message_pump
from textual.actions import ActionParseResult
from textual.app import App
from textual.dom import DOMNode

from talkie_tui import __version__
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

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

    async def run_action(
        self,
        action: str | ActionParseResult,
        default_namespace: DOMNode | None = None,
        namespaces: Mapping[str, DOMNode] | None = None,
    ) -> bool:
        """Run an action; one that fails is reported, and the app goes on if the person wants."""
        try:
            return await super().run_action(action, default_namespace, namespaces)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._report(error, can_continue=True)
            return True

    def _handle_exception(self, error: Exception) -> None:
        # Textual offers no public hook for this: every other unhandled exception (message
        # handlers, workers, compose) reaches this method, which by default exits with a
        # traceback. The failing widget's message loop stops after it returns.
        # When it is our own loop that is ending, no screen can show any more.
        self._report(error, can_continue=False, can_show=active_message_pump.get(None) is not self)

    def _note_for_tests(self, error: Exception) -> None:
        self._return_code = ExitCode.FAILED
        if self._exception is None:
            # Kept as Textual does, so `run_test` still re-raises it for the test framework.
            self._exception = error
            self._exception_event.set()

    def _report(self, error: Exception, *, can_continue: bool, can_show: bool = True) -> None:
        """Write the report, save the drafts, and show the screen (or leave if it cannot)."""
        # Loaded on the first crash, not at every start (issue 24).
        from talkie_tui.logs import write_crash_report
        from talkie_tui.ui.screens.crash import CrashScreen

        self._note_for_tests(error)
        self.crash_report = write_crash_report(error, __version__)
        self._preserve()
        summary = describe_error(error)
        showing = bool(self.screen_stack) and isinstance(self.screen_stack[-1], CrashScreen)
        if not can_show or showing or not self.is_running or not self.screen_stack:
            self._leave(summary)
            return
        # The answer comes back through the app's own loop: pushed from the failing widget's
        # handler, Textual would hand it to that widget, whose loop has stopped (Esc on the
        # box would then close it and never quit).
        requester = active_message_pump.set(self)
        try:
            self.push_screen(
                CrashScreen(summary, self.crash_report, can_continue=can_continue),
                self._after_crash(summary),
            )
        except Exception:  # the screen itself failed: leave quietly
            self._leave(summary)
        finally:
            active_message_pump.reset(requester)

    def _after_crash(self, summary: str) -> Callable[[bool | None], None]:
        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self._leave(summary)
            else:
                self._return_code = ExitCode.OK  # going on: a later clean exit is a clean exit

        return answered

    def _preserve(self) -> None:
        """Let every screen save what the user would not want to lose (drafts)."""
        for screen in self.screen_stack:
            preserve = getattr(screen, "preserve", None)
            if callable(preserve):
                with contextlib.suppress(Exception):
                    preserve()

    def _leave(self, summary: str) -> None:
        """Exit with FAILED (1); after the terminal is restored, one message says what to do."""
        if self.crash_report is not None:
            where = _("The details are in {path}.").format(path=self.crash_report)
        else:
            where = _("The details could not be written to the log folder.")
        message = _("talkie stopped after an unexpected error ({summary}). {where}")
        text = message.format(summary=summary, where=where)
        self.exit(return_code=ExitCode.FAILED, message=Text(text))
