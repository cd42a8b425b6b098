"""The scripted demo agent: each request shows its group of events, deterministically."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.helpers import AUTH, TEST_TOKEN

from .wire import Socket, run_turn, start_turn, text_of, types_of, wait_until_idle


@pytest.fixture
def demo_url(minara_gateway: Callable[..., str]) -> str:
    """A gateway without test mode: every message goes to the demo agent."""
    return minara_gateway(auth_token=TEST_TOKEN, demo_delay=0.0, slow_delay=0.03)


def _data(events: list[tuple[int, dict]], kind: str) -> list[dict]:
    return [event["data"] for _, event in events if event["type"] == kind]


def _ask(http: httpx.Client, url: str, socket: Socket, message: str) -> tuple[str, list, dict]:
    session_id = start_turn(http, url, message)["session_id"]
    socket.subscribe(session_id)
    events = socket.events(session_id, until=("pending_question_added",))
    return session_id, events, events[-1][1]["data"]


def _answer(http: httpx.Client, url: str, question_id: str, answer: dict) -> None:
    response = http.post(
        f"{url}/v1/interactions/{question_id}/answer",
        json={"answers": [{"questionIndex": 0, **answer}]},
        headers=AUTH,
    )
    assert response.status_code == 200, response.text


def test_portfolio_is_a_tool_call_a_table_a_chart_and_a_kv(
    http: httpx.Client, demo_url: str
) -> None:
    _, events = run_turn(http, demo_url, "Show me my portfolio")
    kinds = types_of(events)
    assert kinds.index("tool_call_start") < kinds.index("tool_call_end") < kinds.index("ui_block")
    blocks = [data["block"]["kind"] for data in _data(events, "ui_block")]
    assert blocks == ["table", "chart", "kv"]
    table = _data(events, "ui_block")[0]["block"]
    assert len(table["rows"]) == 4 and "Bitcoin (BTC)" in table["rows"][0][0]
    assert "41,880.50 USD" in text_of(events)
    _, again = run_turn(http, demo_url, "portfolio")
    assert text_of(again) == text_of(events)  # deterministic


def test_swap_quotes_then_confirms_before_moving_funds(http: httpx.Client, demo_url: str) -> None:
    with Socket(demo_url) as socket:
        session_id, before, question = _ask(http, demo_url, socket, "swap 100 USDC to ETH")
        assert [d["name"] for d in _data(before, "tool_call_start")] == ["swap_quote"]
        assert _data(before, "ui_block")[0]["block"]["kind"] == "kv"
        assert question["kind"] == "confirm"
        assert question["asked_by"] == {"agent": "trader", "tool": "swap"}
        options = [option["label"] for option in question["questions"][0]["options"]]
        assert options == ["Confirm", "Cancel"]
        assert "100 USDC" in question["questions"][0]["text"]
        _answer(http, demo_url, question["id"], {"selected_labels": ["Confirm"]})
        after = socket.events(session_id)
    assert [d["name"] for d in _data(after, "tool_call_start")] == ["execute_swap"]
    assert text_of(after).startswith("Done: you swapped 100 USDC for 0.031108 ETH.")


def test_a_cancelled_or_unanswered_swap_moves_nothing(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(auth_token=TEST_TOKEN, demo_delay=0.0, question_seconds=0.2)
    with Socket(url) as socket:
        session_id, _, question = _ask(http, url, socket, "swap 100 USDC to ETH")
        _answer(http, url, question["id"], {"selected_labels": ["Cancel"]})
        after = socket.events(session_id)
    assert text_of(after) == "Cancelled. Nothing was moved."
    assert not _data(after, "tool_call_start")
    with Socket(url) as socket:
        session_id, _, question = _ask(http, url, socket, "please swap 100 usdc for eth")
        after = socket.events(session_id)
    assert after[0][1]["data"] == {"id": question["id"], "outcome": "timeout"}
    assert "cancelled" in text_of(after) and "Nothing was moved" in text_of(after)


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("swap 100 DOGE to ETH", "I can swap between"),
        ("swap 5000 USDC to ETH", "You hold only 1,250 USDC"),
        ("swap 1 ETH to ETH", "two different assets"),
    ],
)
def test_a_swap_that_cannot_be_done_says_why(
    http: httpx.Client, demo_url: str, message: str, words: str
) -> None:
    _, events = run_turn(http, demo_url, message)
    assert words in text_of(events) and not _data(events, "pending_question_added")


def test_connect_my_exchange_asks_for_a_secret(http: httpx.Client, demo_url: str) -> None:
    with Socket(demo_url) as socket:
        session_id, _, question = _ask(http, demo_url, socket, "connect my exchange")
        assert question["kind"] == "secret"
        assert question["writeEndpoint"] == "/v1/credentials/exchange_api_key"
        written = http.put(
            f"{demo_url}{question['writeEndpoint']}", json={"value": "k-1"}, headers=AUTH
        )
        assert written.status_code == 200
        _answer(http, demo_url, question["id"], {"selected_labels": ["provided"]})
        after = socket.events(session_id)
    assert text_of(after).endswith("Your exchange is connected (read-only).")
    assert "k-1" not in str(wait_until_idle(http, demo_url, session_id))


def test_which_account_is_a_select(http: httpx.Client, demo_url: str) -> None:
    with Socket(demo_url) as socket:
        session_id, _, question = _ask(http, demo_url, socket, "Which account?")
        assert question["kind"] == "select"
        labels = [option["label"] for option in question["questions"][0]["options"]]
        assert labels == ["Main", "Savings", "Trading"]
        _answer(http, demo_url, question["id"], {"selected_labels": ["Trading"]})
        assert text_of(socket.events(session_id)) == "Using the Trading account from now on."


def test_name_my_watchlist_is_an_input(http: httpx.Client, demo_url: str) -> None:
    with Socket(demo_url) as socket:
        session_id, _, question = _ask(http, demo_url, socket, "name my watchlist")
        assert question["kind"] == "input" and question["questions"][0]["placeholder"]
        _answer(http, demo_url, question["id"], {"free_text": "  Layer   1s "})
        assert text_of(socket.events(session_id)) == "Your watchlist is now called “Layer 1s”."


def test_plan_my_week_updates_the_todos_in_place(http: httpx.Client, demo_url: str) -> None:
    _, events = run_turn(http, demo_url, "plan my week")
    lists = [data["items"] for data in _data(events, "todos")]
    assert len(lists) == 5
    assert [sum(item["done"] for item in items) for items in lists] == [0, 1, 2, 3, 4]
    assert len({tuple(item["text"] for item in items) for items in lists}) == 1


def test_research_is_slow_and_takes_interjections(http: httpx.Client, demo_url: str) -> None:
    session_id = start_turn(http, demo_url, "research Solana")["session_id"]
    with Socket(demo_url) as socket:
        socket.subscribe(session_id)
        socket.events(session_id, until=("tool_call_start",))
        body = {"session_id": session_id, "message": "compare with ETH"}
        assert http.post(f"{demo_url}/v1/chat/interject", json=body, headers=AUTH).json() == {
            "status": "injected"
        }
        events = socket.events(session_id)
    assert _data(events, "user_interjection")[0]["message"] == "compare with ETH"
    assert "about Solana" in text_of(events)
    assert text_of(events).endswith("You added “compare with ETH”: I kept that in mind.")
    assert len(_data(events, "text_delta")) > 10


def test_anything_else_gets_a_short_list_of_what_to_try(http: httpx.Client, demo_url: str) -> None:
    _, events = run_turn(http, demo_url, "hello")
    text = text_of(events)
    for example in ("portfolio", "swap 100 USDC to ETH", "connect my exchange", "plan my week"):
        assert example in text
    assert types_of(events) == ["start", *["text_delta"] * (len(events) - 2), "done"]


def test_an_interrupted_tool_call_ends_unsuccessfully(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(auth_token=TEST_TOKEN, slow_delay=2.0)
    session_id = start_turn(http, url, "research Bitcoin")["session_id"]
    with Socket(url) as socket:
        socket.subscribe(session_id)
        started = socket.events(session_id, until=("tool_call_start",))[-1][1]["data"]
        http.post(f"{url}/v1/chat/interrupt", json={"session_id": session_id}, headers=AUTH)
        events = [event for _, event in socket.events(session_id)]
    ended = {"id": started["id"], "ok": False, "error": "Interrupted"}
    assert events == [
        {"type": "tool_call_end", "data": ended},
        {"type": "done", "data": {"interrupted": True}},
    ]
    segment = wait_until_idle(http, url, session_id)["messages"][-1]["metadata"]["segments"][0]
    assert (segment["type"], segment["ok"]) == ("tool", False)
