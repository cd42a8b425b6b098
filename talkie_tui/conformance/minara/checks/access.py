"""The Minara checks of health and authentication, over HTTP and the socket."""

from __future__ import annotations

from talkie_tui.conformance.minara.checks.base import (
    CHAT,
    STREAM,
    check,
    expect_refusal,
)
from talkie_tui.conformance.minara.session import Session
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show

CLOSE_WAIT = 5.0  # "closes at once"


@check("healthz", section="notes/minara.md (the gateway's public documentation)")
async def healthz(session: Session) -> None:
    """GET /healthz answers 200 {"ok": true} without a token."""
    answer = await session.wire.request("GET", "/healthz", token=None)
    data = answer.json()
    if answer.status != 200 or not isinstance(data, dict) or data.get("ok") is not True:
        raise CheckFailed(f'GET /healthz answered {answer.describe()}, not 200 {{"ok": true}}')


@check("auth-http", section=f"{CHAT} Authentication")
async def auth_http(session: Session) -> None:
    """With a token set, a request without it or with a wrong one → 401 and the error body."""
    wire = session.wire
    if not wire.token:
        raise CheckSkipped("no token given (--token or MINARA_TOKEN): the gateway is anonymous")
    rule = (
        f'{CHAT}: "When the gateway runs with GATEWAY_AUTH_TOKEN set, HTTP requests carry '
        'Authorization: Bearer <token>"'
    )
    for token, what in ((None, "without a token"), ("wrong-" + wire.token, "with a wrong token")):
        answer = await wire.request("GET", "/v1/sessions", token=token)
        expect_refusal(answer, 401, f"GET /v1/sessions {what}", rule)


@check("auth-socket", section=f"{STREAM} The socket")
async def auth_socket(session: Session) -> None:
    """The socket takes `?token=`; without one it is accepted and closed with 4401."""
    wire = session.wire
    if not wire.token:
        raise CheckSkipped("no token given (--token or MINARA_TOKEN): the gateway is anonymous")
    async with wire.socket() as socket:
        await socket.send({"type": "ping"})
        frame = await socket.frame()
        if frame.get("type") != "pong":
            raise CheckFailed(
                f"with ?token= the socket answered a ping with {show(frame)}, not "
                f'{{"type": "pong"}}'
            )
    for token, what in ((None, "without a token"), ("wrong-" + wire.token, "with a wrong token")):
        rule = (
            f'{STREAM}: "A missing or bad token: the server accepts the upgrade and closes at '
            'once with code 4401"'
        )
        async with wire.socket(token=token) as socket:
            try:
                code = await socket.closed_with(wait=CLOSE_WAIT)
            except CheckFailed as failure:
                raise CheckFailed(f"the socket {what}: {failure}; {rule}") from None
        if code != 4401:
            raise CheckFailed(f"the socket {what} closed with code {code}; {rule}")
