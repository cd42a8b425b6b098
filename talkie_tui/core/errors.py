"""Failures a server or the network can cause, as exceptions shared by every protocol.

Each protocol module turns its own error envelope into these
(`talkie_tui.protocol.talkie.errors` for talkie/1), so the layers above catch one family whatever
the server speaks.
"""

from __future__ import annotations

from typing import Any

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

__all__ = [
    "AddressRefused",
    "ConflictError",
    "DiscoveryError",
    "EventTooLarge",
    "ExpiredError",
    "ForbiddenError",
    "NotFoundError",
    "RateLimitedError",
    "ServerError",
    "StaleError",
    "TalkieError",
    "TooLargeError",
    "TransportError",
    "UnauthorizedError",
    "UnsupportedProtocolVersion",
]


class TalkieError(Exception):
    """Anything that went wrong while talking to a server, whatever protocol it speaks."""

    retryable: bool = False

    def __init__(self, message: str, *, retryable: bool | None = None) -> None:
        message = clean_text(message)  # messages quote the server, and reach the screen
        super().__init__(message)
        self.message = message
        if retryable is not None:
            self.retryable = retryable

    @property
    def retry_hint(self) -> str:
        """A short sentence telling the user whether trying again may help."""
        return _("Trying again may help.") if self.retryable else _("Trying again will not help.")


class DiscoveryError(TalkieError):
    """The address does not lead to a usable talkie/1 manifest (§1)."""


class AddressRefused(DiscoveryError):
    """The address itself is refused before anything is sent (plain http off this computer,
    no host, a user name in it): the same rules hold for every protocol, so no other is tried."""


class TransportError(TalkieError):
    """The network failed: no connection, a timeout, a TLS failure, a dropped stream."""

    retryable = True


class UnsupportedProtocolVersion(TalkieError):
    """The server's stream speaks a protocol version newer than this client reads."""


class EventTooLarge(TalkieError):
    """One server-sent event exceeded the size cap; the stream was abandoned."""


class ServerError(TalkieError):
    """A non-2xx answer of a server, carrying its error envelope (or what stood for it)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str,
        retryable: bool,
        details: dict[str, Any] | None = None,
        field: str | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message, retryable=retryable)
        self.status = status
        self.code = clean_text(code)
        self.details = details or {}
        self.field = clean_text(field) if field is not None else None
        """The request field at fault, when the server named one."""
        self.request_id = clean_text(request_id) if request_id is not None else None
        """The server's id of the failed request, to quote when asking for help."""

    def __str__(self) -> str:
        return f"{self.message} ({self.code}, HTTP {self.status})"


class UnauthorizedError(ServerError):
    """401: the token is missing, expired or revoked."""


class ForbiddenError(ServerError):
    """403: the signed-in user may not do this."""


class NotFoundError(ServerError):
    """404: unknown thread, action or session."""


class ConflictError(ServerError):
    """409 conflict: the opposite decision was already made."""


class StaleError(ServerError):
    """409 stale: the action's parameters changed since it was shown."""


class ExpiredError(ServerError):
    """410: the action or session expired."""


class TooLargeError(ServerError):
    """413: the message is longer than the server accepts."""


class RateLimitedError(ServerError):
    """429: slow down (retryable) or the quota is used up (not retryable)."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after
