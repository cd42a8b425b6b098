"""Numbers from the server that are absurd: a 429's Retry-After (§3), usage meters (§4/§5).

An infinite, enormous, negative or NaN number must neither crash the app nor lock anything
away for ever (Retry stays reachable), and the message stays.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.ui.widgets.notice import NoticeView
from tests.hostile.kit import answer, custom, frames, hostile_app, says
from tests.protocol.conftest import Serve
from tests.stub_server import ENDPOINTS, envelope
from tests.ui.flows import chat_screen, make_app, until

pytestmark = pytest.mark.hostile


@pytest.mark.parametrize(
    "retry_after",
    [
        "-5",
        pytest.param("inf", id="inf"),
        pytest.param("1e308", id="huge"),
    ],
)
async def test_an_absurd_retry_after_neither_crashes_nor_locks_retry(
    serve: Serve, tmp_path: Path, retry_after: str
) -> None:
    """§3 429: any Retry-After leaves the app running, the message kept, Retry reachable."""

    async def limited(request: Request) -> Response:
        await request.body()
        body = envelope("rate_limited", "Slow down.", retryable=True)
        return JSONResponse(body, status_code=429, headers={"Retry-After": retry_after})

    server = serve(hostile_app(limited))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        screen.send(screen.session.prepare("wait for me"))
        await until(pilot, lambda: bool(screen.transcript.query(NoticeView)))
        await pilot.pause()
        notice = screen.transcript.query_one(NoticeView)
        assert app.is_running
        assert notice.seconds_left <= 24 * 3600
        assert screen.session.conversation.turns[0].text == "wait for me"


# Valid JSON whose ratio overflows, and the non-standard literals Python's json accepts.
METERS = [
    {"label": "Huge", "used": 1e308, "limit": 1e-308, "unit": "t"},
    {"label": "Inf", "used": float("inf"), "limit": 10},
    {"label": "NaN", "used": float("nan"), "limit": float("nan")},
]


async def test_absurd_usage_meters_do_not_break_the_header(serve: Serve, tmp_path: Path) -> None:
    """§4/§5 talkie.usage: absurd meters from status or a run never fail a worker."""

    async def status(request: Request) -> Response:
        body = {"user": {"id": "u", "name": "Tester"}, "chat": True, "usage": METERS}
        # As Python writes it: Infinity and NaN included, as a sloppy server would.
        return Response(json.dumps(body), media_type="application/json")

    run = frames(answer(*says("counted"), custom("talkie.usage", {"usage": METERS})))
    server = serve(hostile_app(run, routes=[Route(ENDPOINTS["status"], status)]))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        screen = await chat_screen(app, pilot)
        screen.send(screen.session.prepare("count me"))
        await until(
            pilot, lambda: not screen.answering and len(screen.session.conversation.turns) == 2
        )
        await pilot.pause()
        assert screen.session.conversation.turns[1].text == "counted"
        messages = [str(n.message) for n in app._notifications]
        assert not any("Something went wrong" in m for m in messages), messages
