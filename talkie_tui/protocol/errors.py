"""The §3 error envelope and every other failure of the protocol layer, as exceptions."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx

from talkie_tui.i18n import _

from .sanitize import clean_text

__all__ = [
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
    "error_from_response",
]

# Statuses where trying again later may help even when the body does not say so.
MAX_RETRY_AFTER = 3600.0
_RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


class TalkieError(Exception):
    """Anything that went wrong while talking to a Talkie server."""

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


class TransportError(TalkieError):
    """The network failed: no connection, a timeout, a TLS failure, a dropped stream."""

    retryable = True


class EventTooLarge(TalkieError):
    """One server-sent event exceeded the size cap; the stream was abandoned."""


class ServerError(TalkieError):
    """A non-2xx answer of a Talkie endpoint, carrying the §3 envelope (or what stood for it)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str,
        retryable: bool,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message, retryable=retryable)
        self.status = status
        self.code = clean_text(code)
        self.details = details or {}

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


_BY_CODE: dict[str, type[ServerError]] = {
    "unauthorized": UnauthorizedError,
    "forbidden": ForbiddenError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "stale": StaleError,
    "expired": ExpiredError,
    "too_large": TooLargeError,
    "rate_limited": RateLimitedError,
    "quota_exceeded": RateLimitedError,
}

_BY_STATUS: dict[int, tuple[str, type[ServerError]]] = {
    400: ("invalid_request", ServerError),
    401: ("unauthorized", UnauthorizedError),
    403: ("forbidden", ForbiddenError),
    404: ("not_found", NotFoundError),
    409: ("conflict", ConflictError),
    410: ("expired", ExpiredError),
    413: ("too_large", TooLargeError),
    429: ("rate_limited", RateLimitedError),
    502: ("upstream_unavailable", ServerError),
    503: ("upstream_unavailable", ServerError),
}


def _envelope(body: bytes) -> dict[str, Any] | None:
    """Return the `error` object of a §3 body, or None when the body is something else."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        error: dict[str, Any] = data["error"]
        return error
    return None


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        seconds = float(value)
    except ValueError:
        return None
    if not math.isfinite(seconds):
        return None
    # A server may ask for patience, not for ever: an hour at most keeps Retry reachable.
    return min(max(0.0, seconds), MAX_RETRY_AFTER)


def error_from_response(response: httpx.Response, body: bytes | None = None) -> ServerError:
    """Turn a non-2xx response into the typed error its §3 envelope (or its status) names."""
    status = response.status_code
    raw = response.content if body is None else body
    default_code, default_cls = _BY_STATUS.get(status, ("internal", ServerError))
    envelope = _envelope(raw)
    if envelope is not None:
        code = envelope.get("code") if isinstance(envelope.get("code"), str) else default_code
        message = envelope.get("message")
        if not isinstance(message, str) or not message.strip():
            message = _(
                "The server answered HTTP {status} ({code}) without an explanation."
            ).format(status=status, code=code)
        retryable_value = envelope.get("retryable")
        retryable = (
            retryable_value if isinstance(retryable_value, bool) else status in _RETRYABLE_STATUSES
        )
        cls = _BY_CODE.get(str(code), default_cls)
    else:
        # A proxy's HTML error page or an empty body: say what we know, never dump the page.
        code = default_code
        reason = response.reason_phrase or "error"
        message = _(
            "The server answered HTTP {status} {reason} without a Talkie error message."
        ).format(status=status, reason=reason)
        retryable = status in _RETRYABLE_STATUSES
        cls = default_cls
        envelope = {}
    kwargs: dict[str, Any] = {"status": status, "code": str(code), "retryable": retryable}
    if cls is RateLimitedError:
        kwargs["retry_after"] = _retry_after(response)
    return cls(message, details=envelope, **kwargs)
