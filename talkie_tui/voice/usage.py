"""The usage reports of a voice call (§10.3): one every interval, the last one, and what they say.

The server counts a call's seconds from these reports and answers with the seconds left. A
`UsageReporter` turns the answers into the time left that the voice bar shows (capped by the
session's `maxSeconds`), one warning when `warnSeconds` remain, and the news that the time is
used up; `VoiceCall` owns one and ends the call then.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from talkie_tui.core.errors import TalkieError
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import _, ngettext
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.voice_models import VoiceSession
from talkie_tui.voice.call_updates import Notice

__all__ = ["USAGE_INTERVAL", "UsageReporter"]

USAGE_INTERVAL = 30.0
FINAL_REPORT_TIMEOUT = 5.0


class UsageReporter:
    """Reports the seconds of one call to the Talkie server and tells what is left."""

    def __init__(
        self,
        client: TalkieClient,
        *,
        elapsed: Callable[[], float],
        notify: Callable[[Notice], None],
        interval: float = USAGE_INTERVAL,
    ) -> None:
        self._client = client
        self._elapsed = elapsed
        self._notify = notify
        self._interval = interval
        self._warned = False

    async def run(
        self,
        session: VoiceSession,
        *,
        running: Callable[[], bool],
        on_remaining: Callable[[float | None], None],
    ) -> bool:
        """Report while `running()`, passing on the seconds left; True once none are left."""
        while running():
            await asyncio.sleep(min(self._interval, self._seconds_to_warning(session)))
            try:
                usage = await self._client.voice_usage(session, self._elapsed())
            except TalkieError as error:
                text = _("Usage could not be reported: {error}").format(error=error.message)
                self._notify(Notice(text, "warning"))
                continue
            remaining = usage.remaining_seconds
            if session.max_seconds is not None:
                left = session.max_seconds - self._elapsed()
                remaining = left if remaining is None else min(remaining, left)
            on_remaining(remaining)
            if remaining is not None and remaining <= 0:
                return True
            warn = session.warn_seconds
            if (
                remaining is not None
                and warn is not None
                and remaining <= warn
                and not self._warned
            ):
                self._warned = True
                seconds = int(remaining)
                text = ngettext(
                    "About {count} second of voice left.",
                    "About {count} seconds of voice left.",
                    seconds,
                ).format(count=seconds)
                self._notify(Notice(text, "warning"))
        return False

    async def final(self, session: VoiceSession) -> None:
        """The last report, so the server closes the session; its failure is not the call's."""
        # A report that fails (server gone, client closed) must not keep devices open.
        with contextlib.suppress(Exception):
            await wait_within(
                self._client.voice_usage(session, self._elapsed(), final=True),
                FINAL_REPORT_TIMEOUT,
            )

    def _seconds_to_warning(self, session: VoiceSession) -> float:
        if session.max_seconds is None or self._warned:
            return self._interval
        until = session.max_seconds - (session.warn_seconds or 0) - self._elapsed()
        return max(1.0, until) if until > 0 else self._interval
