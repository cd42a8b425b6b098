"""Authentication (§2) against servers that bounce the bearer elsewhere or reject it forever.

The bearer goes only to the issuer origin, never after a redirect; a 401 is answered by one
refresh, then "sign in again", never by a loop.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from talkie_tui.auth.store import MemoryStore, StoredGrant
from talkie_tui.config import Settings
from talkie_tui.ui.widgets.notice import NoticeView
from tests.auth.stub_authorization_server import TokenLedger, authorization_server
from tests.helpers import TEST_TOKEN
from tests.hostile.kit import ask_cli, bearers, hostile_app, sink_app
from tests.protocol.conftest import Serve
from tests.stub_server import (
    ANOTHER_LOOPBACK,
    ENDPOINTS,
    StubServer,
    error_response,
    manifest_document,
    talkie_app,
)
from tests.ui.flows import make_app, until

pytestmark = pytest.mark.hostile


def bounce_to(elsewhere: StubServer, status: int = 307) -> Any:
    """A handler that redirects every request to the same path on `elsewhere`."""

    async def bounce(request: Request) -> Response:
        await request.body()
        return RedirectResponse(elsewhere.url(request.url.path), status_code=status)

    return bounce


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_a_run_redirected_to_another_origin_does_not_take_the_bearer(
    serve: Serve, status: int
) -> None:
    """§2.1 MUST NOT: a run answered 3xx to another origin is not followed; nothing goes there."""
    elsewhere = serve(sink_app(), host=ANOTHER_LOOPBACK)
    server = serve(hostile_app(bounce_to(elsewhere, status)))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "redirected the request" in asked.err and "does not follow" in asked.err
    assert elsewhere.requests == []
    assert len(server.paths("POST")) == 1  # not retried either


async def test_redirects_everywhere_keep_the_token_home_and_the_message(
    serve: Serve, tmp_path: Path
) -> None:
    """§2.1 (TUI): status/threads/run bounce elsewhere: none followed, the message kept."""
    elsewhere = serve(sink_app(), host=ANOTHER_LOOPBACK)
    bounce = bounce_to(elsewhere)
    routes = [
        Route(ENDPOINTS["status"], bounce),
        Route(ENDPOINTS["threads"], bounce),
        Route(ENDPOINTS["run"], bounce, methods=["POST"]),
    ]
    server = serve(talkie_app(routes))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: bool(app.screen.query("#composer")))
        screen = app.screen
        await until(pilot, lambda: screen.header.state == "offline")
        screen.composer.insert("keep this")
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.transcript.query(NoticeView)))
        user = screen.session.conversation.turns[0]
        assert (user.text, user.state) == ("keep this", "failed")
        assert "does not follow" in screen.transcript.query_one(NoticeView).part.text
    assert elsewhere.requests == []
    assert set(bearers(server.requests)) == {f"Bearer {TEST_TOKEN}"}


async def test_a_401_loop_refreshes_once_then_asks_to_sign_in(serve: Serve) -> None:
    """§2.1: OAuth sign-in, a server that rejects every token: one refresh, then exit 3."""
    ledger = TokenLedger()
    issuer = serve(authorization_server(ledger)).origin

    def manifest(origin: str) -> dict[str, Any]:
        return manifest_document(origin, serverId="loop.test", auth={"oauth": {"issuer": issuer}})

    async def reject(request: Request) -> Response:
        await request.body()
        return error_response(401, "unauthorized", "The token is not accepted here.")

    server = serve(hostile_app(reject, manifest=manifest))
    client_id = Settings().oauth_client_id
    MemoryStore().save("loop.test", StoredGrant("rt-0", issuer, client_id, "talkie"))
    asked = await ask_cli(server.origin, "hello", token=None)
    assert asked.code == 3
    assert "sign-in needed" in asked.err and "The token is not accepted here." in asked.err
    assert bearers(r for r in server.requests if r.method == "POST") == [
        "Bearer at-1",
        "Bearer at-2",
    ]
    assert ledger.refresh_requests == 2  # the first access token, then one refresh
    assert len(server.paths("GET")) <= 2  # the manifest, and at most one refresh of it
    everything_sent = (
        b"".join(r.body for r in server.requests)
        + str([r.headers for r in server.requests]).encode()
    )
    assert b"rt-" not in everything_sent  # the refresh token stays with the AS


async def test_a_401_with_endpoints_that_change_on_every_fetch_does_not_loop(
    serve: Serve,
) -> None:
    """§1/§2.1: endpoints that change on every manifest fetch cannot make a 401 loop."""
    numbers = itertools.count()

    def manifest(origin: str) -> dict[str, Any]:
        document = manifest_document(origin)
        document["endpoints"]["run"] = f"/run/{next(numbers)}"
        return document

    async def reject(request: Request) -> Response:
        await request.body()
        return error_response(401, "unauthorized", "Never.")

    server = serve(talkie_app([Route("/run/{n}", reject, methods=["POST"])], manifest=manifest))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 3
    assert len(server.paths("POST")) <= 2
    assert len(server.paths("GET")) <= 2


async def test_the_tui_does_not_loop_on_401_and_keeps_the_message(
    serve: Serve, tmp_path: Path
) -> None:
    """§2.1 (TUI): all 401: one try per request, nothing repeats, the message kept."""

    async def reject(request: Request) -> Response:
        await request.body()
        return error_response(401, "unauthorized", "Your token was revoked.")

    routes = [
        Route(ENDPOINTS["status"], reject),
        Route(ENDPOINTS["threads"], reject),
        Route(ENDPOINTS["run"], reject, methods=["POST"]),
    ]
    server = serve(talkie_app(routes))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await until(pilot, lambda: bool(app.screen.query("#composer")))
        screen = app.screen
        await until(pilot, lambda: screen.header.state == "offline")
        screen.composer.insert("do not lose me")
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.transcript.query(NoticeView)))
        count = len(server.requests)
        await pilot.pause(0.6)
        assert len(server.requests) == count, "requests went on by themselves"
        user = screen.session.conversation.turns[0]
        assert (user.text, user.state) == ("do not lose me", "failed")
        assert any("Your token was revoked." in str(n.message) for n in app._notifications)
    calls = [path for path in server.paths() if path != "/.well-known/talkie.json"]
    # Status and threads at the start, the run, threads again after it: each tried once,
    # each 401 followed by at most one fresh look at the manifest (§1).
    assert sorted(calls) == sorted(
        [ENDPOINTS["status"], ENDPOINTS["threads"], ENDPOINTS["run"], ENDPOINTS["threads"]]
    )
    assert len(server.paths()) - len(calls) <= 1 + len(calls)
