"""What a protocol's sign-in asks the person through: `Prompts`, and what it asks with.

The TUI implements `Prompts` with its screens (`ui/signin/prompts.py`), `talkie login` with the
terminal (`commands/terminal_prompts.py`); a protocol's sign-in (`backends/<protocol>/sign_in.py`)
never shows anything itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from talkie_tui.auth.loopback import CallbackOutcome
    from talkie_tui.auth.tokens import OAuthTokens
    from talkie_tui.core.tokens import TokenSource

__all__ = [
    "BrowserFlow",
    "BrowserServer",
    "EmailCodes",
    "FlowFactory",
    "Prompts",
    "Severity",
    "TokenCheck",
]

Severity = Literal["information", "warning", "error"]

TokenCheck = Callable[[str], Awaitable[None]]
"""Tries a token against the server; raises a `TalkieError` (401: the server refused it)."""


class EmailCodes(Protocol):
    """A hub's e-mail sign-in: a code mailed to an address, then traded for a session.

    Both raise a `TalkieError` with the hub's words: `invalid_email`, `too_many_codes` (a
    `RateLimitedError` with `retry_after`), `invalid_code` (a wrong, used, expired or
    over-guessed code).
    """

    async def send_code(self, email: str) -> None:
        """Ask the hub to mail a code to `email`."""
        ...

    async def verify(self, email: str, code: str) -> Any:
        """Trade the code for a session; what it returns is what the asking gives back."""
        ...


class BrowserFlow(Protocol):
    """One OAuth authorization-code flow, as `talkie_tui.auth.signin.SignIn` runs it."""

    async def start(self) -> str:
        """Prepare the flow; the URL the person must open."""
        ...

    def submit(self, url: str) -> CallbackOutcome:
        """Take a pasted answer."""
        ...

    async def wait(self, timeout: float = ...) -> OAuthTokens:  # noqa: ASYNC109
        """The tokens, once an answer arrived and was traded."""
        ...

    async def aclose(self) -> None:
        """Cancel if still running; close the loopback port and the connections."""
        ...


FlowFactory = Callable[[], BrowserFlow]
"""Starts a new browser flow (a retry starts another)."""


class _Issuer(Protocol):
    @property
    def issuer(self) -> str: ...


class _Hint(Protocol):
    @property
    def hint(self) -> str | None: ...


class _Offers(Protocol):
    @property
    def oauth(self) -> _Issuer | None: ...

    @property
    def token(self) -> _Hint | None: ...


class _Manifest(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def auth(self) -> _Offers: ...


class BrowserServer(Protocol):
    """What the browser sign-in shows of a server: its name, its OAuth issuer and its
    development token's hint (a talkie/1 `DiscoveredServer`)."""

    @property
    def manifest(self) -> _Manifest:
        """The server's manifest."""
        ...


class Prompts(Protocol):
    """How a sign-in tells and asks the person: the TUI's screens, or a terminal.

    The asking methods must run where the asker may wait for the person (a Textual worker);
    `tell` may be called from a thread too (a keyring look-up warns from one).
    """

    def say(self, text: str, *, kind: str = "info", busy: bool = False) -> None:
        """Show how connecting goes (kind: info, error, warning or busy; busy spins)."""
        ...

    def tell(self, text: str, severity: Severity = "information") -> None:
        """Tell the person something they should know, whatever screen is up."""
        ...

    def changed(self) -> None:
        """The known servers or their sign-in changed: show them as they are now."""
        ...

    async def choose_store(self, name: str, reason: str) -> str | None:
        """Where to keep a sign-in to `name` with no keyring: "file", "session", None (cancel)."""
        ...

    async def confirm(self, title: str, body: str, *, accept: str, refuse: str) -> bool:
        """True when the person accepts what `body` says."""
        ...

    async def ask_token(
        self, name: str, origin: str, check: TokenCheck, *, reason: str, kept_in: str
    ) -> str | None:
        """A bearer token the server took (`check` tries it), or None when cancelled."""
        ...

    async def ask_email_code(
        self, name: str, origin: str, codes: EmailCodes, *, reason: str, kept_in: str
    ) -> Any:
        """What `codes.verify` gave for the address and code typed, or None when cancelled."""
        ...

    async def ask_browser(
        self, server: BrowserServer, flow: FlowFactory | None, *, offer_dev_token: bool, reason: str
    ) -> TokenSource | None:
        """The tokens of a sign-in in the browser (`flow`, None for a development token
        only) to a talkie/1 server, or None when cancelled."""
        ...
