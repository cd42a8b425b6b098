"""Actions (§8): decisions, idempotency, conflicts, expiry, the undo window, risk policy."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.helpers import AUTH, TEST_TOKEN, ask, assert_error, customs, new_id


def _propose(http: httpx.Client, url: str, text: str = "talkie-test:action") -> dict[str, Any]:
    (action,) = customs(ask(http, url, text, thread_id=new_id("t")), "talkie.action")
    return action


def _decide(
    http: httpx.Client,
    url: str,
    action: dict[str, Any],
    decision: str,
    *,
    params_hash: str | None = None,
    method: str = "button",
) -> httpx.Response:
    return http.post(
        f"{url}/api/talkie/actions/{action['id']}/decision",
        json={
            "decision": decision,
            "paramsHash": params_hash or action["paramsHash"],
            "method": method,
        },
        headers=AUTH,
    )


def _get(http: httpx.Client, url: str, action: dict[str, Any]) -> dict[str, Any]:
    response = http.get(f"{url}/api/talkie/actions/{action['id']}", headers=AUTH)
    assert response.status_code == 200
    result: dict[str, Any] = response.json()
    return result


def _thread_messages(http: httpx.Client, url: str, thread_id: str) -> list[dict[str, Any]]:
    body = http.get(f"{url}/api/talkie/threads/{thread_id}", headers=AUTH).json()
    messages: list[dict[str, Any]] = body["messages"]
    return messages


def test_get_action(http: httpx.Client, fast_url: str) -> None:
    action = _propose(http, fast_url)
    assert _get(http, fast_url, action) == action
    assert_error(http.get(f"{fast_url}/api/talkie/actions/a_nope", headers=AUTH), 404, "not_found")


def test_confirm_executes_once(http: httpx.Client, fast_url: str) -> None:
    action = _propose(http, fast_url)
    response = _decide(http, fast_url, action, "confirm")
    assert response.status_code == 200
    body = response.json()
    assert body["action"]["status"] == "done"
    assert body["action"]["id"] == action["id"]
    (event,) = body["events"]
    assert event["type"] == "CUSTOM" and event["name"] == "talkie.card"
    assert event["value"]["fallbackText"]
    messages = _thread_messages(http, fast_url, action["threadId"])
    assert messages[-1]["role"] == "assistant"
    assert messages[-1]["cards"] == [event["value"]]
    # The same decision again: current state, nothing executed a second time.
    again = _decide(http, fast_url, action, "confirm", method="voice")
    assert again.status_code == 200
    assert again.json() == {"action": body["action"], "events": []}
    assert len(_thread_messages(http, fast_url, action["threadId"])) == len(messages)
    assert _get(http, fast_url, action)["status"] == "done"


def test_cancel_then_confirm_conflicts(http: httpx.Client, fast_url: str) -> None:
    action = _propose(http, fast_url)
    cancelled = _decide(http, fast_url, action, "cancel")
    assert cancelled.status_code == 200
    assert cancelled.json() == {"action": {**action, "status": "cancelled"}, "events": []}
    assert _decide(http, fast_url, action, "cancel").status_code == 200
    assert_error(_decide(http, fast_url, action, "confirm"), 409, "conflict")
    assert _get(http, fast_url, action)["status"] == "cancelled"


def test_confirm_then_cancel_conflicts(http: httpx.Client, fast_url: str) -> None:
    action = _propose(http, fast_url)
    assert _decide(http, fast_url, action, "confirm").status_code == 200
    assert_error(_decide(http, fast_url, action, "cancel"), 409, "conflict")


def test_changed_params_hash_is_stale(http: httpx.Client, fast_url: str) -> None:
    action = _propose(http, fast_url)
    assert_error(
        _decide(http, fast_url, action, "confirm", params_hash="sha256:" + "0" * 64), 409, "stale"
    )
    assert _get(http, fast_url, action)["status"] == "pending"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"decision": "maybe", "paramsHash": "x", "method": "button"},
        {"decision": "confirm", "method": "button"},
        {"decision": "confirm", "paramsHash": "x", "method": "telepathy"},
        [1],
    ],
    ids=["empty", "bad-decision", "no-hash", "bad-method", "not-object"],
)
def test_bad_decision_body_is_400(http: httpx.Client, fast_url: str, body: Any) -> None:
    action = _propose(http, fast_url)
    response = http.post(
        f"{fast_url}/api/talkie/actions/{action['id']}/decision", json=body, headers=AUTH
    )
    assert_error(response, 400, "invalid_request")
    assert _get(http, fast_url, action)["status"] == "pending"


def test_decision_on_unknown_action_is_404(http: httpx.Client, fast_url: str) -> None:
    action = {"id": "a_nope", "paramsHash": "sha256:00"}
    assert_error(_decide(http, fast_url, action, "confirm"), 404, "not_found")


def test_expired_action(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, action_ttl_seconds=0.2)
    action = _propose(http, url)
    time.sleep(0.3)
    error = assert_error(_decide(http, url, action, "confirm"), 410, "expired")
    assert action["expiresAt"] in error["message"]
    assert _get(http, url, action)["status"] == "expired"
    assert_error(_decide(http, url, action, "cancel"), 410, "expired")


def test_new_proposal_does_not_replace_a_pending_one(http: httpx.Client, fast_url: str) -> None:
    thread_id = new_id("t")
    (first,) = customs(
        ask(http, fast_url, "talkie-test:action", thread_id=thread_id), "talkie.action"
    )
    (second,) = customs(
        ask(http, fast_url, "talkie-test:action", thread_id=thread_id), "talkie.action"
    )
    assert first["id"] != second["id"]
    body = http.get(f"{fast_url}/api/talkie/threads/{thread_id}", headers=AUTH).json()
    assert [(a["id"], a["status"]) for a in body["actions"]] == [
        (first["id"], "pending"),
        (second["id"], "pending"),
    ]


# --- demo agent actions: risk levels and the undo window ----------------------------------------


@pytest.fixture
def demo_url(devserver: Callable[..., str]) -> str:
    return devserver(dev_token=TEST_TOKEN, demo_delay=0.0, undo_seconds=0.4)


def test_risk_levels_and_confirm_methods(http: httpx.Client, demo_url: str) -> None:
    low = _propose(http, demo_url, "add a note to Alfa: call back on Friday")
    medium = _propose(http, demo_url, "send the offer to Alfa")
    high = _propose(http, demo_url, "delete contact Tomáš Dvořák")
    assert (low["riskLevel"], medium["riskLevel"], high["riskLevel"]) == ("low", "medium", "high")
    assert low["confirm"]["methods"] == ["button", "voice"]
    assert medium["confirm"] == {"methods": ["button", "voice"], "voice": {"keyword": "send"}}
    assert high["confirm"] == {"methods": ["button"]}
    assert "call back on Friday" in low["summary"]
    assert "novak@alfa.cz" in medium["summary"]


def test_outbound_action_can_be_undone(http: httpx.Client, demo_url: str) -> None:
    action = _propose(http, demo_url, "send the offer to Alfa")
    body = _decide(http, demo_url, action, "confirm").json()
    assert body["action"]["status"] == "running"
    assert body["action"]["undoUntil"] > action["createdAt"]
    assert customs(body["events"], "talkie.card")
    messages_before = _thread_messages(http, demo_url, action["threadId"])
    undone = _decide(http, demo_url, action, "cancel")
    assert undone.status_code == 200
    assert undone.json()["action"]["status"] == "cancelled"
    time.sleep(0.5)
    assert _get(http, demo_url, action)["status"] == "cancelled"
    assert _thread_messages(http, demo_url, action["threadId"]) == messages_before
    assert_error(_decide(http, demo_url, action, "confirm"), 409, "conflict")


def test_outbound_action_is_done_after_the_undo_window(http: httpx.Client, demo_url: str) -> None:
    action = _propose(http, demo_url, "send the offer to Alfa")
    assert _decide(http, demo_url, action, "confirm").json()["action"]["status"] == "running"
    assert _decide(http, demo_url, action, "confirm").json()["action"]["status"] == "running"
    time.sleep(0.5)
    current = _get(http, demo_url, action)
    assert current["status"] == "done" and "undoUntil" not in current
    assert_error(_decide(http, demo_url, action, "cancel"), 409, "conflict")
    messages = _thread_messages(http, demo_url, action["threadId"])
    (result,) = messages[-1]["cards"]
    assert result["title"] == "Offer sent"
    assert any(block["type"] == "file" for block in result["blocks"])


def test_high_risk_action_is_confirmed_by_button(http: httpx.Client, demo_url: str) -> None:
    action = _propose(http, demo_url, "delete contact Tomáš Dvořák")
    body = _decide(http, demo_url, action, "confirm").json()
    assert body["action"]["status"] == "done"
    (card,) = customs(body["events"], "talkie.card")
    assert {"type": "badge", "text": "Deleted", "tone": "negative"} in card["blocks"]


def test_decision_is_not_reachable_from_the_agent() -> None:
    import inspect

    from talkie_tui.devserver.talkie import (
        demo_agent,
        demo_answers,
        demo_lookups,
        demo_proposals,
        run_context,
        testmode,
    )

    for module in (run_context, demo_agent, demo_answers, demo_lookups, demo_proposals, testmode):
        source = inspect.getsource(module)
        assert ".decide(" not in source and "/decision" not in source
    assert not hasattr(run_context.RunContext, "decide")
