"""Decisions (§8) that the server refuses: 409 conflict/stale, 410 expired, 500.

The action card explains the refusal, stays usable, and one human gesture sends exactly one
decision (a decision is never re-sent by itself, not even after a retryable 500).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.ui.widgets.action_card import ActionCard, explain_decision_error
from tests.hostile.kit import answer, controls, custom, frames, hostile, hostile_app, shown
from tests.protocol.conftest import Connect, Serve
from tests.stub_server import ENDPOINTS, envelope
from tests.ui.flows import chat_screen, make_app, until

pytestmark = pytest.mark.hostile

REFUSALS = {
    "a_conflict": (409, "conflict"),
    "a_stale": (409, "stale"),
    "a_expired": (410, "expired"),
    "a_internal": (500, "internal"),
}


def action(action_id: str) -> dict[str, Any]:
    """A pending, medium-risk action confirmable by button."""
    return {
        "id": action_id,
        "summary": f"Do {action_id}",
        "riskLevel": "medium",
        "status": "pending",
        "paramsHash": f"sha256:{action_id}",
        "confirm": {"methods": ["button"]},
    }


def refusing_server(decisions: list[tuple[str, Any]]) -> Any:
    """Proposes one action per refusal; every decision is refused as REFUSALS says."""
    run = frames(answer(*(custom("talkie.action", action(a)) for a in REFUSALS)))

    async def decide(request: Request) -> Response:
        action_id = request.path_params["actionId"]
        decisions.append((action_id, json.loads(await request.body())))
        await asyncio.sleep(0.3)  # long enough for a second key press to land meanwhile
        status, code = REFUSALS[action_id]
        body = envelope(code, hostile(f"server words {code}"), retryable=status == 500)
        return JSONResponse(body, status_code=status)

    async def current(request: Request) -> Response:
        return JSONResponse(action(request.path_params["actionId"]))

    routes = [
        Route(ENDPOINTS["decision"], decide, methods=["POST"]),
        Route(ENDPOINTS["action"], current),
    ]
    return hostile_app(run, routes=routes)


async def decide_every_card(pilot: Any, screen: Any, *, keys: bool) -> list[ActionCard]:
    """Ask for the proposals, then y twice on each card after its input guard (`keys`: the
    first card by real key presses; the rest through the same binding's action)."""
    screen.send(screen.session.prepare("do things"))
    await until(pilot, lambda: len(screen.transcript.query(ActionCard)) == len(REFUSALS))
    cards = list(screen.transcript.query(ActionCard))
    await until(pilot, lambda: not any(card.is_guarded for card in cards))
    if keys:
        cards[0].focus()
        await pilot.press("y", "y")  # the second press lands while the first is in flight
    for card in cards[1 if keys else 0 :]:
        card.action_confirm()
        card.action_confirm()
    await pilot.pause()
    return cards


async def test_one_gesture_sends_one_decision_even_when_refused(
    serve: Serve, tmp_path: Path
) -> None:
    """§8: two quick presses send one decision; a refused one (409/410/500) is not re-sent."""
    decisions: list[tuple[str, Any]] = []
    server = serve(refusing_server(decisions))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 60)) as pilot:
        screen = await chat_screen(app, pilot)
        await decide_every_card(pilot, screen, keys=True)
        await until(pilot, lambda: len(decisions) == len(REFUSALS))
        await pilot.pause(0.6)  # anything re-sent by itself would arrive meanwhile
        assert app.is_running
    assert sorted(a for a, _ in decisions) == sorted(REFUSALS)
    assert all(
        body["decision"] == "confirm" and body["method"] == "button" for _, body in decisions
    )
    assert [a for a, _ in decisions].count("a_internal") == 1


async def test_a_refused_decision_is_explained_on_its_card(serve: Serve, tmp_path: Path) -> None:
    """§8/§3: a refusal shows on its card (server's words, clean); the card stays usable."""
    server = serve(refusing_server([]))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 60)) as pilot:
        screen = await chat_screen(app, pilot)
        cards = await decide_every_card(pilot, screen, keys=False)
        await until(pilot, lambda: not any(card.is_busy for card in cards), timeout=15)
        await pilot.pause()
        for card in cards:
            message = str(card.query_one(".action--message").render())
            assert message, card.action.id
            assert controls(message) == []
            assert card.action.status == "pending" and card.can_decide
        internal = next(card for card in cards if card.action.id == "a_internal")
        assert shown("server words internal") in str(
            internal.query_one(".action--message").render()
        )


async def refusal(serve: Serve, connect: Connect, action_id: str) -> TalkieError:
    """The error the client raises for the refused decision on `action_id`."""
    server = serve(refusing_server([]))
    client = await connect(server.origin)
    with pytest.raises(TalkieError) as caught:
        await client.decide(Action.model_validate(action(action_id)), "confirm")
    return caught.value


async def test_a_retryable_500_is_not_re_sent_by_itself(serve: Serve, connect: Connect) -> None:
    """§8: a decision is sent only on a gesture: a 500 (retryable) is reported, not retried."""
    decisions: list[tuple[str, Any]] = []
    server = serve(refusing_server(decisions))
    client = await connect(server.origin)
    with pytest.raises(TalkieError) as caught:
        await client.decide(Action.model_validate(action("a_internal")), "confirm")
    assert caught.value.retryable
    assert len(decisions) == 1
    explained = explain_decision_error(caught.value)
    assert shown("server words internal") in explained and controls(explained) == []


@pytest.mark.parametrize("action_id", ["a_conflict", "a_stale", "a_expired"])
async def test_a_409_or_410_shows_the_servers_words(
    serve: Serve, connect: Connect, action_id: str
) -> None:
    """§3/§8: the card's explanation of a 409/410 carries the server's own message."""
    error = await refusal(serve, connect, action_id)
    code = REFUSALS[action_id][1]
    assert shown(f"server words {code}") in explain_decision_error(error)
