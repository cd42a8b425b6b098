"""The §3 error envelope of talkie/1, read into the shared error types of `talkie_tui.core`."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx

from talkie_tui.core.errors import (
    ConflictError,
    ExpiredError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    StaleError,
    TooLargeError,
    UnauthorizedError,
)
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

__all__ = ["MAX_RETRY_AFTER", "error_from_response", "redirect_refused", "unworded"]

# Statuses where trying again later may help even when the body does not say so.
MAX_RETRY_AFTER = 3600.0
_RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


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


def redirect_refused(response: httpx.Response, wording: str) -> ServerError:
    """The error for a redirect, which no client follows: `wording` names its `{target}`."""
    target = clean_text(response.headers.get("location", "?"))[:200]
    return ServerError(
        wording.format(target=target),
        status=response.status_code,
        code="redirect",
        retryable=False,
    )


def unworded(response: httpx.Response, wording: str) -> str:
    """The message for an answer without an envelope (a proxy's page): `wording` names its
    `{status}` and `{reason}`."""
    reason = clean_text(response.reason_phrase or "error")
    return wording.format(status=response.status_code, reason=reason)
