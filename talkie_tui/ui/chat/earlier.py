"""The server's earlier pages of the thread on screen (where the backend `PagesBack`): when
the person scrolls to the top of the transcript, or selects above its first message, the
transcript asks (`Transcript.LoadEarlier`) and the page before the oldest message shown comes
in above it, the view kept where it was. One page at a time; once the server has no more (its
retention window ends the history: the notice saying so stands first), nothing more is asked
for that thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from talkie_tui.backends.base import PagesBack
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost

if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, Session

__all__ = ["EarlierPages"]


class EarlierPages:
    """Asks the backend for the page before the oldest message shown."""

    def __init__(self, host: ChatHost, backend: Backend) -> None:
        self._host = host
        self._backend = backend
        self._loading = False
        self._done: object | None = None  # the session whose history is all here

    @property
    def offered(self) -> bool:
        """True when the server keeps history in pages to ask for."""
        return isinstance(self._backend, PagesBack)

    @property
    def loading(self) -> bool:
        """True while a page is on its way."""
        return self._loading

    def requested(self) -> None:
        """The person reached the top: ask for the page before it (once at a time)."""
        session = self._host.session
        if not self.offered or self._loading or self._done is session:
            return
        if session.thread_id is None:
            return
        self._loading = True
        self._host.run_worker(
            self._load(session), name="load_earlier", group="earlier", exit_on_error=False
        )

    async def _load(self, session: Session[Any]) -> None:
        backend = self._backend
        assert isinstance(backend, PagesBack)
        try:
            more = await backend.load_earlier(session)
        except TalkieError as error:
            if not self._host.sign_in_needed(error):
                self._host.notify(
                    _("Earlier messages could not be loaded: {error}").format(error=error.message),
                    severity="warning",
                    markup=False,
                )
            return
        finally:
            self._loading = False
        if not more:
            self._done = session
        if self._host.session is session:
            self._host.transcript.show_older()
