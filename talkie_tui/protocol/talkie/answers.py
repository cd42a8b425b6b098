"""Reading a talkie/1 server's answers: its errors, its JSON, its models, its event stream."""

from __future__ import annotations

from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from talkie_tui.core.errors import (
    ServerError,
    TalkieError,
)
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.errors import error_from_response, redirect_refused

_M = TypeVar("_M", bound=BaseModel)


async def checked_stream(response: httpx.Response) -> httpx.Response:
    """The response if it is an event stream; otherwise it is closed and refused."""
    media_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "text/event-stream":
        await response.aclose()
        shown = clean_text(media_type or _("no content type"))[:60]
        raise ServerError(
            _("The server answered the message with '{type}' instead of an event stream.").format(
                type=shown
            ),
            status=response.status_code,
            code="invalid_response",
            retryable=False,
        )
    return response


def error_for(response: httpx.Response) -> ServerError:
    """The typed error of a refused answer (a redirect is never followed)."""
    if response.is_redirect:
        wording = _("The server redirected the request to {target}; Talkie does not follow it.")
        return redirect_refused(response, wording)
    error = error_from_response(response)
    error.message = clean_text(error.message)
    return error


def json_of(response: httpx.Response, what: str) -> Any:
    """The answer's JSON; TalkieError when it is not JSON."""
    try:
        return response.json()
    except (ValueError, RecursionError):
        raise TalkieError(
            _("The server's answer to '{what}' is not JSON.").format(what=what)
        ) from None


def parse_model(model: type[_M], response: httpx.Response, what: str) -> _M:
    """The answer read as `model`; TalkieError naming the first problem."""
    try:
        return model.model_validate(json_of(response, what))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        text = _("The server's answer to '{what}' is unreadable ({where}: {problem}).")
        raise TalkieError(text.format(what=what, where=where, problem=first["msg"])) from None
