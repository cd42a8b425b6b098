"""The gateway's error answers (`{"error": {"code", "message"}}`) as the shared error types.

The envelope has the shape of talkie/1's, so `protocol.errors.error_from_response` reads it
(the class by code or status, retryable by status, `Retry-After` of a 429); this module words
what a gateway sends without an envelope, and refuses redirects, which the client never follows.
"""

from __future__ import annotations

import json

import httpx

from talkie_tui.core.errors import ServerError
from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.errors import error_from_response, redirect_refused, unworded

__all__ = ["EndpointRefused", "error_for", "has_envelope"]


class EndpointRefused(ServerError):
    """The gateway named a place to send something that is not its own (another origin)."""


def has_envelope(body: bytes) -> bool:
    """True when `body` is a JSON object with an `error` object."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get("error"), dict)


def error_for(response: httpx.Response) -> ServerError:
    """The typed error of a non-2xx answer (its body already read, capped), in the gateway's
    own words when it gave some."""
    if response.is_redirect:
        wording = _("The gateway redirected the request to {target}; talkie does not follow it.")
        return redirect_refused(response, wording)
    error = error_from_response(response)
    if not has_envelope(response.content):
        wording = _("The gateway answered HTTP {status} {reason} without a message.")
        error.message = unworded(response, wording)
    return error
