"""What the server says of itself and of the person, in the chat screen's header: who is signed
in and their usage (§4 status), the brand logo, and whether it answered at all (`reach`).

The header's connection state is not pushed from here: the screen derives it in one place from
`reach`, a message being answered and the wait for a broken stream's answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from talkie_tui.config import save_logo
from talkie_tui.core.errors import TalkieError

from .host import ScreenHost

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend

    from .call_controller import CallController
    from .widgets.header import ConnectionState, TalkieHeader
    from .widgets.transcript import Transcript

__all__ = ["ServerStatus", "StatusHost"]


class StatusHost(ScreenHost, Protocol):
    """What the status needs of the screen it is shown on; `ChatScreen` is one."""

    @property
    def header(self) -> TalkieHeader:
        """Where the user, the usage and the logo show."""

    @property
    def transcript(self) -> Transcript:
        """Its welcome panel shows the call key when the person may call."""

    def refresh_bindings(self) -> None:
        """Ask the footer and the key checks to look again (voice may now be allowed)."""

    def sign_in_needed(self, error: TalkieError) -> bool:
        """On a 401 offer a new sign-in; True when it was offered."""

    def show_state(self) -> None:
        """Show the header's derived state again (`reach` changed)."""


class ServerStatus:
    """The signed-in person, their usage and the logo of one chat screen's server."""

    def __init__(self, host: StatusHost, backend: Backend, call: CallController) -> None:
        self._host = host
        self._backend = backend
        self._call = call  # `status.voice`: the signed-in person may call
        self.reach: ConnectionState = "connecting"
        """What the server's last answer said: "connecting" until the first one, "offline"
        after a failed status, "connected" after a status or a run that reached it."""

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
            self.reach = "offline"
            host.show_state()
            if not host.sign_in_needed(error):
                host.notify(f"{error.message} {error.retry_hint}", severity="error", markup=False)
            return
        self.reach = "connected"
        host.show_state()
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
