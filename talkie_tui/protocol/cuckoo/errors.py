"""A hub's error answers (`{"error": {code, message, field?, request_id?}}`) as the shared types.

The class follows the status (401 UnauthorizedError, 403 ForbiddenError, 404 NotFoundError,
409 ConflictError, 429 RateLimitedError with its `Retry-After`, anything else ServerError); the
code, message, field and request id are the hub's. Trying again helps after a 429 and a 5xx
only: the hub has no other transient answer (a 422 breaks a rule, and stays broken). A redirect
is refused, never followed, and an answer without an envelope (a proxy's page) is worded here.
"""

from __future__ import annotations

import httpx

from talkie_tui.core.errors import ServerError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.errors import error_from_response, redirect_refused, unworded

__all__ = ["error_for"]


def _envelope(response: httpx.Response) -> dict[str, object] | None:
    """The `error` object of the answer, when it is the hub's envelope."""
    try:
        data = response.json()
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else None


def _optional_text(envelope: dict[str, object], key: str) -> str | None:
    value = envelope.get(key)
    return value if isinstance(value, str) and value else None


def error_for(response: httpx.Response) -> ServerError:
    """The typed error of a non-2xx answer of a hub (its body already read, capped)."""
    status = response.status_code
    if response.is_redirect:
        wording = _("The hub redirected the request to {target}; talkie does not follow it.")
        return redirect_refused(response, wording)
    # The class by status, the code and message, and Retry-After of a 429, read as talkie/1's
    # envelope is (it has the same shape); what only a hub sends is added below.
    error = error_from_response(response)
    error.retryable = status == 429 or status >= 500
    envelope = _envelope(response)
    if envelope is None:
        wording = _("The hub answered HTTP {status} {reason} without a message.")
        error.message = unworded(response, wording)
        error.args = (error.message,)
        return error
    field, request_id = _optional_text(envelope, "field"), _optional_text(envelope, "request_id")
    error.field = clean_text(field) if field else None
    error.request_id = clean_text(request_id) if request_id else None
    return error
