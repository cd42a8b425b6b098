"""§3 Errors: the envelope `{error: {code, message, retryable}}` as typed exceptions."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from talkie_tui.core.errors import (
    ConflictError,
    ExpiredError,
    ForbiddenError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    StaleError,
    TalkieError,
    TooLargeError,
    TransportError,
    UnauthorizedError,
)
from talkie_tui.protocol.talkie.errors import error_from_response
from talkie_tui.protocol.talkie.run_request import RunRequest
from tests.protocol.conftest import Connect, Serve
from tests.stub_server import envelope, talkie_app

PROXY_PAGE = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


def _error(status: int, body: Any = None, *, text: str | None = None, **headers: str) -> Any:
    if text is not None:
        response = httpx.Response(status, text=text, headers=headers)
    else:
        response = httpx.Response(status, json=body, headers=headers)
    return error_from_response(response)


@pytest.mark.parametrize(
    ("status", "code", "retryable", "cls"),
    [
        (400, "invalid_request", False, ServerError),
        (401, "unauthorized", False, UnauthorizedError),
        (403, "forbidden", False, ForbiddenError),
        (404, "not_found", False, NotFoundError),
        (409, "conflict", False, ConflictError),
        (409, "stale", False, StaleError),
        (410, "expired", False, ExpiredError),
        (413, "too_large", False, TooLargeError),
        (429, "rate_limited", True, RateLimitedError),
        (429, "quota_exceeded", False, RateLimitedError),
        (502, "upstream_unavailable", True, ServerError),
        (503, "upstream_unavailable", True, ServerError),
        (500, "internal", False, ServerError),
    ],
)
def test_every_code_of_the_table_becomes_its_error(
    status: int, code: str, retryable: bool, cls: type[ServerError]
) -> None:
    """§3: each HTTP status/code pair maps to a typed error with the server's words."""
    error = _error(status, envelope(code, f"Zpráva pro {code}", retryable=retryable))

    assert type(error) is cls
    assert (error.status, error.code, error.retryable) == (status, code, retryable)
    assert error.message == f"Zpráva pro {code}"
    assert str(error) == f"Zpráva pro {code} ({code}, HTTP {status})"
    assert error.details["code"] == code


@pytest.mark.parametrize(
    ("retryable", "hint"),
    [(True, "Trying again may help."), (False, "Trying again will not help.")],
)
def test_retryable_decides_the_hint_shown_to_the_user(retryable: bool, hint: str) -> None:
    """§3: `retryable` tells the user whether trying again helps (429 rate vs quota)."""
    code = "rate_limited" if retryable else "quota_exceeded"
    assert _error(429, envelope(code, "x", retryable=retryable)).retry_hint == hint


@pytest.mark.parametrize(
    ("status", "body", "code", "retryable", "cls"),
    [
        (502, None, "upstream_unavailable", True, ServerError),
        (503, "", "upstream_unavailable", True, ServerError),
        (500, "", "internal", True, ServerError),
        (404, "Not Found", "not_found", False, NotFoundError),
        (409, "<html>conflict</html>", "conflict", False, ConflictError),
        (418, "", "internal", False, ServerError),
    ],
)
def test_html_pages_and_empty_bodies_are_described_not_dumped(
    status: int, body: str | None, code: str, retryable: bool, cls: type[ServerError]
) -> None:
    """§3 with a proxy in the way: no envelope means the status decides, and HTML is not shown."""
    error = _error(status, text=PROXY_PAGE if body is None else body)

    assert type(error) is cls
    assert (error.code, error.retryable) == (code, retryable)
    assert f"HTTP {status}" in error.message and "<" not in error.message
    assert error.details == {}


@pytest.mark.parametrize(
    "body",
    [
        {"error": "a string"},
        {"message": "no error key"},
        ["error"],
    ],
)
def test_bodies_that_are_not_the_envelope_are_ignored(body: Any) -> None:
    """Only `{error: {...}}` is the §3 envelope."""
    error = _error(503, body)
    assert (error.code, error.retryable) == ("upstream_unavailable", True)
    assert "without a Talkie error message" in error.message


@pytest.mark.parametrize(
    ("inner", "code", "message_part", "retryable"),
    [
        ({"code": "stale"}, "stale", "HTTP 409 (stale) without an explanation", False),
        ({"code": 7, "message": "   "}, "conflict", "HTTP 409 (conflict)", False),
        ({"message": "Zkuste to znovu", "retryable": "yes"}, "conflict", "Zkuste", False),
        ({"code": "teapot", "message": "I am a teapot"}, "teapot", "teapot", False),
    ],
)
def test_incomplete_envelopes_fill_the_gaps_from_the_status(
    inner: dict[str, Any], code: str, message_part: str, retryable: bool
) -> None:
    """A partial envelope keeps what it has; code, message and retryable default sensibly."""
    error = _error(409, {"error": inner})
    assert error.code == code and message_part in error.message
    assert error.retryable is retryable


@pytest.mark.parametrize(("header", "seconds"), [("30", 30.0), ("-5", 0.0), ("soon", None)])
def test_rate_limit_carries_retry_after(header: str, seconds: float | None) -> None:
    """429 answers carry Retry-After in seconds when the server gives it."""
    error = _error(
        429, envelope("rate_limited", "Slow down", retryable=True), **{"Retry-After": header}
    )
    assert isinstance(error, RateLimitedError) and error.retry_after == seconds


def test_transport_errors_are_retryable_by_default() -> None:
    """A network failure may go away; a TalkieError says whether retrying helps."""
    assert TransportError("down").retryable
    assert not TalkieError("bad").retryable
    assert TalkieError("bad", retryable=True).retry_hint == "Trying again may help."


# --- over HTTP ------------------------------------------------------------------------------


async def test_rest_errors_arrive_typed_over_http(serve: Serve, connect: Connect) -> None:
    """§3 over a real connection: a 403 envelope on GET status raises ForbiddenError."""

    async def status(request: Request) -> Response:
        return JSONResponse(envelope("forbidden", "Nemáte přístup"), status_code=403)

    client = await connect(serve(talkie_app([Route("/api/talkie/status", status)])).origin)

    with pytest.raises(ForbiddenError, match="Nemáte přístup"):
        await client.status()


async def test_proxy_html_page_over_http_is_a_clean_retryable_error(
    serve: Serve, connect: Connect
) -> None:
    """§3: an HTML 502 from a proxy is an upstream_unavailable error without the HTML."""

    async def threads(request: Request) -> Response:
        return PlainTextResponse(PROXY_PAGE, status_code=502, media_type="text/html")

    client = await connect(serve(talkie_app([Route("/api/talkie/threads", threads)])).origin)

    with pytest.raises(ServerError) as failed:
        await client.threads()
    assert (failed.value.code, failed.value.retryable) == ("upstream_unavailable", True)
    assert "nginx" not in failed.value.message


async def test_errors_before_the_stream_use_the_envelope(serve: Serve, connect: Connect) -> None:
    """§5: errors before the stream starts use the §3 format, e.g. 413 too_large."""

    async def run(request: Request) -> Response:
        return JSONResponse(envelope("too_large", "Zpráva je příliš dlouhá"), status_code=413)

    client = await connect(
        serve(talkie_app([Route("/api/talkie/run", run, methods=["POST"])])).origin
    )

    with pytest.raises(TooLargeError, match="příliš dlouhá") as failed:
        async for _ in client.run(RunRequest("hello")):
            pass
    assert not failed.value.retryable
