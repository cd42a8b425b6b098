"""A fixed talkie/1 server inside httpx (MockTransport), for pixel-stable snapshots.

Flows are tested against the real reference server over HTTP; snapshots need answers that do
not change between runs (no random ids, no clock-driven countdowns), so they use this.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx

from talkie_tui.protocol.talkie.client import TalkieClient
from tests.stub_server import ENDPOINTS

ORIGIN = "https://crm.example.com"

MANIFEST = {
    "spec": "talkie/1",
    "issuer": ORIGIN,
    "serverId": "crm.example.com",
    "name": "Example CRM",
    "brand": {"accent": "#0b7a75"},
    "auth": {"token": {"hint": "Settings → Devices"}},
    "endpoints": dict(ENDPOINTS),
    "limits": {"maxMessageChars": 4000},
}

STATUS = {
    "user": {"id": "u1", "name": "Jana Nováková", "email": "jana@example.com"},
    "usage": [
        {"label": "Tokens today", "used": 120000, "limit": 400000, "unit": "tokens"},
        {"label": "Voice today", "used": 6, "limit": 60, "unit": "minutes"},
    ],
}

ANSWER = (
    "**Alfa s.r.o.** is a client from *Brno*. Open items:\n\n"
    "1. Renew the `annual licence`\n"
    "2. Send offer N-2026-014\n\n"
    "See [the record](/crm/companies/alfa)."
)

CARD = {
    "id": "c1",
    "title": "Alfa s.r.o.",
    "subtitle": "Client · Brno",
    "blocks": [
        {"type": "badge", "text": "Active", "tone": "positive"},
        {
            "type": "fields",
            "fields": [
                {"label": "IČO", "value": "12345678"},
                {"label": "Turnover", "value": "1.2 M CZK"},
            ],
        },
        {"type": "list", "items": [{"title": "Meeting 10:00", "subtitle": "Novák"}], "more": 3},
    ],
    "fallbackText": "Alfa s.r.o. – client in Brno, active",
}

ACTION = {
    "id": "a_77",
    "threadId": "t_1",
    "toolCallId": "call_5",
    "summary": "Send offer N-2026-014 to novak@alfa.cz",
    "riskLevel": "medium",
    "status": "pending",
    "paramsHash": "sha256:4f1c",
    "confirm": {"methods": ["button"]},
}


HIGH_RISK_ACTION = ACTION | {
    "id": "a_78",
    "summary": "Delete contact Tomáš Dvořák (Gamma Foods s.r.o.)",
    "riskLevel": "high",
}


def _answer_events(text: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t_1", "runId": "r_1"}]
    if "fail" in text:
        events.append(
            {
                "type": "RUN_ERROR",
                "message": "The model provider is unavailable right now.",
                "code": "upstream_unavailable",
                "metadata": {"retryable": True},
            }
        )
        return events
    events += [
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "call_1",
            "toolCallName": "search",
            "metadata": {"label": "Searching contacts…"},
        },
        {"type": "TOOL_CALL_END", "toolCallId": "call_1", "metadata": {"ok": True}},
        {"type": "TEXT_MESSAGE_START", "messageId": "m_a", "role": "assistant"},
    ]
    events += [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m_a", "delta": ANSWER[i : i + 7]}
        for i in range(0, len(ANSWER), 7)
    ]
    events += [
        {"type": "TEXT_MESSAGE_END", "messageId": "m_a"},
        {"type": "CUSTOM", "name": "talkie.card", "value": CARD},
        {
            "type": "CUSTOM",
            "name": "talkie.action",
            "value": HIGH_RISK_ACTION if "delete" in text.lower() else ACTION,
        },
        {"type": "RUN_FINISHED", "threadId": "t_1", "runId": "r_1"},
    ]
    return events


def _threads() -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    titles = ["Alfa s.r.o. renewal", "Meetings this week", "Offer N-2026-014", "Invoices"]
    return {
        "threads": [
            {
                "id": f"t_{i}",
                "title": title,
                "channel": "voice" if i == 2 else "chat",
                "createdAt": now,
                "updatedAt": now,
            }
            for i, title in enumerate(titles, start=1)
        ]
    }


def handle(request: httpx.Request) -> httpx.Response:
    """Answer one request of the fixed server."""
    path = request.url.path
    if path == "/.well-known/talkie.json":
        return httpx.Response(200, json=MANIFEST)
    if path == "/api/talkie/status":
        return httpx.Response(200, json=STATUS)
    if path == "/api/talkie/threads":
        return httpx.Response(200, json=_threads())
    if path == "/api/talkie/run":
        text = json.loads(request.content)["messages"][0]["content"]
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in _answer_events(text))
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)
    return httpx.Response(
        404, json={"error": {"code": "not_found", "message": "Not here.", "retryable": False}}
    )


async def connect_fixed(address: str, **options: Any) -> TalkieClient:
    """`TalkieClient.connect`, but to the fixed server inside httpx."""
    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    options.pop("http", None)
    client = await TalkieClient.connect(ORIGIN, http=http, **options)
    client._own_http = True  # close the in-process client with the TalkieClient
    return client
