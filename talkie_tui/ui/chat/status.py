"""What the server says of itself and of the person, in the chat screen's header: who is signed
in and their usage (§4 status), the brand logo, and whether it answers at all (`reach`).

`reach` is true within seconds on every protocol. A Talkie server has no socket between runs and
a hub's or a gateway's socket may die quietly, so while no answer streams the server is asked for
the person's account (the light §4 status, `GET /v1/client/me`, one page of sessions) every
CHECK_SECONDS: the header says "offline" from the first failure, with since when and the next
try, and tries again with backoff (RETRY_SECONDS); "connected" only after an answer. A request of
the screen that could not reach the server (a send, a status) counts as a failed check.

The header's connection state is not pushed from here: the screen derives it in one place from
`reach`, a message being answered and the wait for a broken stream's answer.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

from talkie_tui.config import save_logo
from talkie_tui.core.errors import TalkieError, TransportError, UnauthorizedError
from talkie_tui.ui.chat.host import ChatHost

if TYPE_CHECKING:
    from collections.abc import Callable

    from talkie_tui.backends.base import Backend
    from talkie_tui.ui.chat.call_controller import CallController
    from talkie_tui.ui.widgets.header import ConnectionState

__all__ = ["CHECK_SECONDS", "RETRY_SECONDS", "ServerStatus"]

CHECK_SECONDS = 5.0
"""Seconds between checks that the server still answers, while nothing else reaches it."""
RETRY_SECONDS = (2.0, 4.0, 8.0, 15.0)
"""Seconds before each next try once it did not answer (the last one repeats)."""


class ServerStatus:
    """The signed-in person, their usage and the logo of one chat screen's server."""

    def __init__(
        self,
        host: ChatHost,
        backend: Backend,
        call: CallController,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._host = host
        self._backend = backend
        self._call = call  # `status.voice`: the signed-in person may call
        self._clock = clock
        self.reach: ConnectionState = "connecting"
        """What the server's last answer said: "connecting" until the first one, "offline"
        after a request that could not reach it, "connected" after one that did."""
        self.offline_since: datetime | None = None
        self._failures = 0
        self._next_check = clock() + CHECK_SECONDS
        self._checking = False

    # --- whether the server answers ------------------------------------------------------

    def watch(self) -> None:
        """Keep `reach` true while the screen is open (a check every CHECK_SECONDS)."""
        self._host.set_interval(1.0, self._tick)

    def reached(self) -> None:
        """A request reached the server: connected, and the next check in CHECK_SECONDS."""
        self._failures = 0
        self.offline_since = None
        self._next_check = self._clock() + CHECK_SECONDS
        if self.reach == "resuming":
            return  # the server answers; the live connection is still on its way back
        if self.reach != "connected":
            self.reach = "connected"
            self._host.show_state()

    def resumed(self) -> None:
        """The live connection is back."""
        self.reach = "connecting"  # so that `reached` says connected
        self.reached()

    def lost(self) -> None:
        """A request could not reach the server: offline from now, tried again with backoff."""
        delay = RETRY_SECONDS[min(self._failures, len(RETRY_SECONDS) - 1)]
        self._failures += 1
        self._next_check = self._clock() + delay
        if self.offline_since is None:
            self.offline_since = datetime.now().astimezone()
        self.reach = "offline"
        self._show_offline()
        self._host.show_state()

    def resuming(self) -> None:
        """A live connection dropped between answers and comes back by itself: said so, and
        the server is asked at once whether it is there at all (offline if not)."""
        if self.reach == "connected":
            self.reach = "resuming"
            self._host.show_state()
        self._next_check = self._clock()

    def failed(self, error: TalkieError) -> None:
        """A request of the screen failed: offline when the network did, else it answered."""
        if isinstance(error, TransportError):
            self.lost()
        else:
            self.reached()

    @property
    def next_try_in(self) -> int:
        """Whole seconds until the next check."""
        return max(0, round(self._next_check - self._clock()))

    def _show_offline(self) -> None:
        since = self.offline_since.strftime("%H:%M") if self.offline_since else ""
        self._host.header.set_offline(since, self.next_try_in)

    def _tick(self) -> None:
        if self.reach == "offline":
            self._show_offline()
        due = self._clock() >= self._next_check
        if not due or self._checking or self._host.answering:
            return
        self._checking = True
        self._host.run_worker(self._check, name="check_reach", group="reach", exit_on_error=False)

    async def _check(self) -> None:
        """Ask for the account: the lightest request every protocol has."""
        try:
            await self._backend.account()
        except UnauthorizedError:
            self.reached()  # it answered; the sign-in is asked for where a request needs it
        except TalkieError as error:
            if isinstance(error, TransportError):
                self.lost()
            else:
                self.reached()  # it answered, in its own words
        else:
            self.reached()
        finally:
            self._checking = False

    def load(self) -> None:
        """Show the signed-in user and usage (again, after a new sign-in)."""
        self._host.run_worker(
            self._load, name="load_status", group="status", exclusive=True, exit_on_error=False
        )

    async def _load(self) -> None:
        host = self._host
        try:
            account = await self._backend.account()
        except TalkieError as error:
            if isinstance(error, TransportError):
                self.lost()
            else:
                self.reach = "offline"
                host.show_state()
            if not host.sign_in_needed(error):
                host.notify(f"{error.message} {error.retry_hint}", severity="error", markup=False)
            return
        self.reached()
        host.header.set_user(account.user)
        host.header.set_usage(account.usage)
        self._call.allowed = account.voice_allowed
        host.transcript.set_voice_allowed(account.voice_allowed)
        host.refresh_bindings()

    def load_logo(self) -> None:
        """Fetch the brand logo (checked before decoding); a bad one is simply not shown."""
        self._host.run_worker(
            self._load_logo, name="load_logo", group="logo", exclusive=True, exit_on_error=False
        )

    async def _load_logo(self) -> None:
        data = await self._backend.logo()
        if data is not None:
            self._host.header.set_logo(data)
            save_logo(self._backend.info.server_id, data)
