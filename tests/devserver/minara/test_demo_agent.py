"""The scripted demo agent: each request shows its group of events, deterministically."""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
import pytest

from talkie_tui.devserver.minara.demo_agent import HELP
from tests.devserver.minara.wire import (
    Socket,
    run_turn,
    start_turn,
    text_of,
    types_of,
    wait_until_idle,
)
from tests.helpers import AUTH, TEST_TOKEN


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


def test_market_summary_is_markdown_a_newer_kind_with_its_fallback_and_a_link(
    http: httpx.Client, demo_url: str
) -> None:
    _, events = run_turn(http, demo_url, "What happened in the market this week?")
    kinds = types_of(events)
    assert kinds.index("tool_call_start") < kinds.index("tool_call_end") < kinds.index("ui_block")
    assert _data(events, "tool_call_start")[0]["name"] == "get_market_summary"
    blocks = [data["block"] for data in _data(events, "ui_block")]
    assert [block["kind"] for block in blocks] == ["markdown", "heatmap", "link"]
    markdown, newer, link = blocks
    lines = markdown["text"].splitlines()
    assert lines[0] == "### The week in short"
    bullets = [line for line in lines if line.startswith("- ")]  # biggest gain first
    assert [line.split("**")[1] for line in bullets] == ["Solana", "Bitcoin", "USD Coin", "Ether"]
    assert bullets[0].startswith("- **Solana** +9.6 %: led the week")
    assert bullets[-1].startswith("- **Ether** -2.3 %: ")
    # A kind this client does not draw (the spec: it shows `fallback_text`), in the block.
    assert newer["fallback_text"] == (
        "Heat map of the 7-day change: SOL +9.6 % · BTC +4.1 % · USDC +0.0 % · ETH -2.3 %"
    )
    assert link == {
        "kind": "link",
        "label": "Solana, the week's top mover",
        "url": "https://solana.com",
    }
    assert text_of(events).startswith("Here is the week in the sample market.")
    assert text_of(events).endswith("Try “set price alerts”.")
    _, again = run_turn(http, demo_url, "market summary")
    assert [d["block"] for d in _data(again, "ui_block")] == blocks  # deterministic


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


def test_set_price_alerts_is_a_select_of_several(http: httpx.Client, demo_url: str) -> None:
    with Socket(demo_url) as socket:
        session_id, _, question = _ask(http, demo_url, socket, "set price alerts")
        assert question["kind"] == "select"
        assert question["asked_by"] == {"agent": "planner", "tool": "price_alerts"}
        [asked] = question["questions"]
        assert asked["multi"] is True and "5 %" in asked["text"]
        labels = [option["label"] for option in asked["options"]]
        assert labels == ["Bitcoin (BTC)", "Ether (ETH)", "Solana (SOL)"]  # no stablecoin
        assert asked["options"][0]["description"] == "now 64,250.00 USD"
        _answer(
            http, demo_url, question["id"], {"selected_labels": ["Solana (SOL)", "Bitcoin (BTC)"]}
        )
        after = socket.events(session_id)
    [tool] = _data(after, "tool_call_start")
    assert tool["name"] == "set_price_alerts"
    assert tool["args"] == {"symbols": ["BTC", "SOL"], "move_percent": 5.0}  # the options' order
    assert _data(after, "tool_call_end")[0]["summary"] == "2 alerts set"
    [block] = [data["block"] for data in _data(after, "ui_block")]
    assert block == {
        "kind": "kv",
        "items": [
            {"label": "Bitcoin (BTC)", "value": "below 61,037.50 USD or above 67,462.50 USD"},
            {"label": "Solana (SOL)", "value": "below 140.98 USD or above 155.82 USD"},
        ],
    }
    assert text_of(after) == "Alerts set for Bitcoin and Solana."


def test_one_price_alert_or_none_in_time(
    http: httpx.Client, demo_url: str, minara_gateway: Callable[..., str]
) -> None:
    with Socket(demo_url) as socket:
        session_id, _, question = _ask(http, demo_url, socket, "Alert me when ETH moves")
        _answer(http, demo_url, question["id"], {"selected_labels": ["Ether (ETH)"]})
        after = socket.events(session_id)
    assert _data(after, "tool_call_end")[0]["summary"] == "1 alert set"
    assert text_of(after) == "Alerts set for Ether."
    url = minara_gateway(auth_token=TEST_TOKEN, demo_delay=0.0, question_seconds=0.2)
    with Socket(url) as socket:
        session_id, _, question = _ask(http, url, socket, "set price alerts")
        after = socket.events(session_id)
    assert after[0][1]["data"] == {"id": question["id"], "outcome": "timeout"}
    assert text_of(after) == "No answer in time, so no alerts were set."
    assert not _data(after, "tool_call_start")


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
    for example in (
        "portfolio",
        "market summary",
        "swap 100 USDC to ETH",
        "set price alerts",
        "connect my exchange",
        "plan my week",
    ):
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


def _answer_for(question: dict) -> dict:
    """A person's answer to any question of the demo: the first option (two when it takes
    several), Confirm, a name, or a secret written to its endpoint first."""
    first = question["questions"][0]
    labels = [option["label"] for option in first.get("options", [])]
    kind = question["kind"]
    if kind == "input":
        return {"free_text": "Layer 1s"}
    if kind == "secret":
        return {"selected_labels": ["provided"]}
    if kind == "confirm":
        return {"selected_labels": ["Confirm"]}
    return {"selected_labels": labels[:2] if first.get("multi") else labels[:1]}


def test_the_requests_help_names_exercise_every_event_group(
    http: httpx.Client, demo_url: str
) -> None:
    """What `make demo` shows, request by request as the help lists them (and a file): every
    event type of the stream page but `error`, every UI block kind and one newer kind with its
    `fallback_text`, every question kind, a select of one and of several."""
    suggestions = re.findall(r"“([^”]+)”", HELP)
    assert len(suggestions) == 9
    seen: set[str] = set()
    blocks: list[dict] = []
    questions: set[tuple[str, bool]] = set()
    with Socket(demo_url) as socket:
        for message in suggestions:
            session_id = start_turn(http, demo_url, message)["session_id"]
            socket.subscribe(session_id)
            while True:
                _, event = socket.next_event(session_id)
                kind, data = event["type"], event["data"]
                seen.add(kind)
                if kind == "ui_block":
                    blocks.append(data["block"])
                elif kind == "pending_question_added":
                    questions.add((data["kind"], bool(data["questions"][0].get("multi"))))
                    if data["kind"] == "secret":
                        written = http.put(
                            demo_url + data["writeEndpoint"], json={"value": "k"}, headers=AUTH
                        )
                        assert written.status_code == 200
                    _answer(http, demo_url, data["id"], _answer_for(data))
                elif kind == "tool_call_start" and message.startswith("research"):
                    body = {"session_id": session_id, "message": "and its fees?"}
                    http.post(f"{demo_url}/v1/chat/interject", json=body, headers=AUTH)
                elif kind in ("done", "error"):
                    break
        png = b"\x89PNG\r\n\x1a\n" + bytes(48_213 - 8)  # the size of the spec's example
        stored = http.post(
            f"{demo_url}/v1/files", files={"file": ("chart.png", png, "image/png")}, headers=AUTH
        ).json()
        attachment = {
            "key": stored["key"],
            "filename": "chart.png",
            "media_type": "image/png",
            "size": stored["size"],
            "kind": "image",
        }
        session_id = start_turn(http, demo_url, "", attachments=[attachment])["session_id"]
        socket.subscribe(session_id)
        events = socket.events(session_id)
    assert text_of(events).startswith("I received chart.png, 48 kB\n")
    seen.update(types_of(events))

    assert seen == {
        "start",
        "text_delta",
        "tool_call_start",
        "tool_call_end",
        "ui_block",
        "todos",
        "pending_question_added",
        "pending_question_resolved",
        "user_interjection",
        "done",
    }
    kinds = {block["kind"] for block in blocks}
    assert {"markdown", "table", "kv", "link", "chart"} < kinds
    newer = [b for b in blocks if b["kind"] not in {"markdown", "table", "kv", "link", "chart"}]
    assert newer and all(block.get("fallback_text") for block in newer)
    assert questions == {
        ("select", False),
        ("select", True),
        ("confirm", False),
        ("input", False),
        ("secret", False),
    }
