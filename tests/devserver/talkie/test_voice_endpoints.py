"""Voice endpoints (§10) of the reference server over real HTTP: sessions, tools, transcripts,
usage, voice decisions, and the test-mode inspection endpoints."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread
from tests.devserver.talkie.conftest import FAST
from tests.helpers import AUTH, TEST_TOKEN, ask, assert_error, customs, new_id

VOICE_ENDPOINTS = {
    "voiceSessions": "/api/talkie/voice/sessions",
    "voiceTool": "/api/talkie/voice/sessions/{voiceSessionId}/tools/{name}",
    "voiceTranscript": "/api/talkie/voice/sessions/{voiceSessionId}/transcript",
    "voiceUsage": "/api/talkie/voice/sessions/{voiceSessionId}/usage",
}
# An offer the provider can judge without WebRTC: its secret is checked before the SDP is used.
TINY_OFFER = "v=0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n"


@pytest.fixture(scope="module")
def voice_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A test-mode server with fake voice, shared by this module's tests (each its own session)."""
    db_path = tmp_path_factory.mktemp("voice") / "voice.sqlite3"
    config = ServerConfig(
        test_mode=True, dev_token=TEST_TOKEN, db_path=db_path, fake_voice=True, **FAST
    )
    with serve_in_thread(config) as url:
        yield url


def _session(http: httpx.Client, url: str, **body: Any) -> dict[str, Any]:
    response = http.post(f"{url}/api/talkie/voice/sessions", json=body, headers=AUTH)
    assert response.status_code == 201, response.text
    session: dict[str, Any] = response.json()
    return session


def _tool(
    http: httpx.Client, url: str, session: dict[str, Any], name: str, arguments: str, call_id: str
) -> httpx.Response:
    return http.post(
        f"{url}/api/talkie/voice/sessions/{session['voiceSessionId']}/tools/{name}",
        json={"callId": call_id, "arguments": arguments},
        headers=AUTH,
    )


def _post(http: httpx.Client, url: str, session: dict[str, Any], what: str, body: Any) -> Any:
    return http.post(
        f"{url}/api/talkie/voice/sessions/{session['voiceSessionId']}/{what}",
        json=body,
        headers=AUTH,
    )


def _thread(http: httpx.Client, url: str, thread_id: str) -> dict[str, Any]:
    response = http.get(f"{url}/api/talkie/threads/{thread_id}", headers=AUTH)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _inspect(http: httpx.Client, url: str, session: dict[str, Any]) -> dict[str, Any]:
    response = http.get(
        f"{url}/api/talkie/_test/voice/sessions/{session['voiceSessionId']}", headers=AUTH
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_manifest_and_status_advertise_voice_only_with_fake_voice(
    http: httpx.Client, fast_url: str, voice_url: str
) -> None:
    plain = http.get(f"{fast_url}/.well-known/talkie.json").json()
    assert not any(name.startswith("voice") for name in plain["endpoints"])
    assert "voice" not in plain["capabilities"]
    assert http.get(f"{fast_url}/api/talkie/status", headers=AUTH).json()["voice"] is False
    assert_error(
        http.post(f"{fast_url}/api/talkie/voice/sessions", json={}, headers=AUTH), 404, "not_found"
    )

    manifest = http.get(f"{voice_url}/.well-known/talkie.json").json()
    assert {k: v for k, v in manifest["endpoints"].items() if k.startswith("voice")} == (
        VOICE_ENDPOINTS
    )
    assert manifest["capabilities"]["voice"] == {
        "transports": ["webrtc"],
        "eventProtocols": ["openai-realtime/1"],
        "signalingHosts": ["127.0.0.1"],
    }
    status = http.get(f"{voice_url}/api/talkie/status", headers=AUTH).json()
    assert status["voice"] is True
    (voice_usage,) = [item for item in status["usage"] if item["unit"] == "minutes"]
    assert voice_usage["label"] == "Voice today" and voice_usage["limit"] == 60


def test_session_has_every_field(http: httpx.Client, voice_url: str) -> None:
    before = datetime.now(UTC)
    session = _session(http, voice_url, locale="cs-CZ")
    assert set(session) == {
        "voiceSessionId", "threadId", "transport", "eventProtocol", "signaling", "clientSecret",
        "expiresAt", "maxSeconds", "warnSeconds", "locale", "labels", "consent",
    }  # fmt: skip
    assert session["voiceSessionId"].startswith("v_")
    assert session["transport"] == "webrtc"
    assert session["eventProtocol"] == "openai-realtime/1"
    signaling = session["signaling"]
    assert signaling["type"] == "sdp-post"
    provider = httpx.URL(signaling["url"])
    assert (provider.scheme, provider.host, provider.path) == (
        "http", "127.0.0.1", "/v1/realtime/calls",
    )  # fmt: skip
    assert provider.port != httpx.URL(voice_url).port  # the provider is its own origin
    assert session["clientSecret"].startswith("ek_") and len(session["clientSecret"]) > 20
    expires = datetime.fromisoformat(session["expiresAt"].replace("Z", "+00:00"))
    # The secret lasts voice_secret_seconds (60) from the moment the session was made: between
    # the request and its answer (stamps in ms, so a millisecond's slack; an order, not a bound
    # on how long the request took).
    lifetime = timedelta(seconds=60)
    assert before - timedelta(milliseconds=1) <= expires - lifetime <= datetime.now(UTC)
    assert (session["maxSeconds"], session["warnSeconds"]) == (900, 60)
    assert session["locale"] == "cs"
    assert session["labels"]["search_contacts"] == "Hledám v kontaktech…"
    assert session["labels"]["send_offer_email"] == "Připravuji e-mail…"
    assert session["consent"] == {"confirm": ["ano", "potvrzuji"], "refuse": ["ne", "zruš"]}
    thread = _thread(http, voice_url, session["threadId"])["thread"]
    assert (thread["channel"], thread["title"]) == ("voice", "Hlasový rozhovor")
    # Each session gets its own secret.
    assert _session(http, voice_url)["clientSecret"] != session["clientSecret"]


def test_session_in_an_existing_thread_and_defaults(http: httpx.Client, voice_url: str) -> None:
    thread_id = new_id("t")
    ask(http, voice_url, "talkie-test:echo hello", thread_id=thread_id)
    session = _session(http, voice_url, threadId=thread_id)
    assert session["threadId"] == thread_id
    assert session["locale"] == "en"  # the server's default without a locale
    assert session["labels"]["search_contacts"] == "Searching contacts…"
    assert session["consent"]["confirm"] == ["yes", "confirm"]
    assert _thread(http, voice_url, thread_id)["thread"]["channel"] == "chat"
    # An empty body is fine; an unsupported locale falls back to English.
    response = http.post(f"{voice_url}/api/talkie/voice/sessions", headers=AUTH)
    assert response.status_code == 201
    assert _session(http, voice_url, locale="de")["locale"] == "en"
    assert_error(
        http.post(f"{voice_url}/api/talkie/voice/sessions", json={"locale": 5}, headers=AUTH),
        400,
        "invalid_request",
    )
    assert_error(http.post(f"{voice_url}/api/talkie/voice/sessions", json={}), 401, "unauthorized")


def test_tool_call_returns_output_and_a_card(http: httpx.Client, voice_url: str) -> None:
    session = _session(http, voice_url)
    response = _tool(http, voice_url, session, "search_contacts", '{"query": "Alfa"}', "call_1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"ok", "output", "events"}
    assert body["ok"] is True
    assert "Alfa s.r.o." in body["output"]
    (card,) = customs(body["events"], "talkie.card")
    assert card["title"] == "Alfa s.r.o." and card["fallbackText"]
    assert all(event["type"] == "CUSTOM" for event in body["events"])
    # The card stays in the voice session's thread.
    messages = _thread(http, voice_url, session["threadId"])["messages"]
    assert [m["cards"] for m in messages] == [[card]]
    assert messages[0]["channel"] == "voice"
    # A tool whose backend fails reports ok: false with an explanation for the model.
    failing = _tool(http, voice_url, session, "fetch_invoices", "{}", "call_2").json()
    assert failing["ok"] is False and "accounting system" in failing["output"]


def test_tool_call_proposes_a_voice_confirmable_action(http: httpx.Client, voice_url: str) -> None:
    session = _session(http, voice_url, locale="cs")
    arguments = '{"company": "Alfa"}'
    body = _tool(http, voice_url, session, "send_offer_email", arguments, "call_offer").json()
    (action,) = customs(body["events"], "talkie.action")
    assert action["status"] == "pending"
    assert action["threadId"] == session["threadId"]
    assert action["toolCallId"] == "call_offer"
    assert action["confirm"] == {"methods": ["button", "voice"], "voice": {"keyword": "odeslat"}}
    assert "N-2026-014" in action["summary"]
    # The model is told how the user confirms, so it can read the proposal out with that.
    assert "„ano, odeslat“" in body["output"]
    assert _thread(http, voice_url, session["threadId"])["actions"] == [action]
    # High risk: button only, and the model is not told to ask for a spoken yes.
    body = _tool(
        http, voice_url, session, "delete_contact", '{"name": "Tomáš Dvořák"}', "call_delete"
    ).json()
    (delete,) = customs(body["events"], "talkie.action")
    assert delete["confirm"] == {"methods": ["button"]}
    assert "„ano" not in body["output"]


def test_tool_call_errors(http: httpx.Client, voice_url: str) -> None:
    session = _session(http, voice_url)
    assert _tool(http, voice_url, session, "list_meetings", "", "call_a").status_code == 200
    again = _tool(http, voice_url, session, "list_meetings", "", "call_a")
    assert "already" in assert_error(again, 409, "conflict")["message"]
    # The same call id in another session is another call.
    other = _session(http, voice_url)
    assert _tool(http, voice_url, other, "list_meetings", "", "call_a").status_code == 200
    assert_error(_tool(http, voice_url, session, "format_disk", "{}", "c2"), 404, "not_found")
    assert_error(
        _tool(http, voice_url, session, "find_offer", "{nope", "c3"), 400, "invalid_request"
    )
    assert_error(_tool(http, voice_url, session, "find_offer", "[1]", "c4"), 400, "invalid_request")
    missing = {**session, "voiceSessionId": "v_missing"}
    assert_error(_tool(http, voice_url, missing, "find_offer", "{}", "c5"), 404, "not_found")
    no_call_id = _post(http, voice_url, session, "tools/find_offer", {"arguments": "{}"})
    assert_error(no_call_id, 400, "invalid_request")


def test_transcripts_are_stored_once(http: httpx.Client, voice_url: str) -> None:
    session = _session(http, voice_url)
    said = {"role": "user", "text": "Who is Petr Novák?", "itemId": "item_1"}
    answered = {"role": "assistant", "text": "Petr Novák runs Alfa.", "itemId": "item_2"}
    for body in (said, answered, said):
        response = _post(http, voice_url, session, "transcript", body)
        assert response.status_code == 201, response.text
    history = _thread(http, voice_url, session["threadId"])
    assert [(m["role"], m["content"], m["channel"]) for m in history["messages"]] == [
        ("user", "Who is Petr Novák?", "voice"),
        ("assistant", "Petr Novák runs Alfa.", "voice"),
    ]
    # A voice thread is named after what the user said first.
    assert history["thread"]["title"] == "Who is Petr Novák?"
    bad = _post(http, voice_url, session, "transcript", {**said, "role": "system"})
    assert_error(bad, 400, "invalid_request")
    long = _post(http, voice_url, session, "transcript", {**said, "text": "x" * 4001})
    assert_error(long, 413, "too_large")


def test_usage_counts_down_and_the_final_report_ends_the_session(
    http: httpx.Client, voice_url: str
) -> None:
    session = _session(http, voice_url)

    def report(seconds: float, final: bool = False) -> dict[str, Any]:
        response = _post(http, voice_url, session, "usage", {"seconds": seconds, "final": final})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    assert report(30) == {"ok": True, "remainingSeconds": 870, "ended": False}
    assert report(95)["remainingSeconds"] == 805
    assert report(60)["remainingSeconds"] == 805  # a late, smaller report gives no time back
    assert report(125, final=True) == {"ok": True, "remainingSeconds": 775, "ended": True}
    ended = _tool(http, voice_url, session, "list_meetings", "{}", "call_late")
    assert_error(ended, 410, "expired")
    recorded = _inspect(http, voice_url, session)
    reports = [(r["seconds"], r["final"], r["remainingSeconds"]) for r in recorded["usageReports"]]
    assert reports == [(30, False, 870), (95, False, 805), (60, False, 805), (125, True, 775)]
    assert recorded["session"]["usedSeconds"] == 125
    assert recorded["session"]["endedAt"] is not None
    assert_error(_post(http, voice_url, session, "usage", {"seconds": -1}), 400, "invalid_request")


def test_session_ends_when_max_seconds_are_used(
    http: httpx.Client, devserver: Callable[..., str]
) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, fake_voice=True, voice_max_seconds=60)
    session = _session(http, url)
    assert session["maxSeconds"] == 60
    body = _post(http, url, session, "usage", {"seconds": 45}).json()
    assert body == {"ok": True, "remainingSeconds": 15, "ended": False}
    body = _post(http, url, session, "usage", {"seconds": 61}).json()
    assert body == {"ok": True, "remainingSeconds": 0, "ended": True}
    assert_error(_tool(http, url, session, "list_meetings", "{}", "call_x"), 410, "expired")
    # Its secret no longer opens a provider call either.
    offer = http.post(
        session["signaling"]["url"],
        content=TINY_OFFER,
        headers={
            "Authorization": f"Bearer {session['clientSecret']}",
            "Content-Type": "application/sdp",
        },
    )
    assert offer.status_code == 401


def test_a_voice_decision_is_recorded_with_its_method(http: httpx.Client, voice_url: str) -> None:
    session = _session(http, voice_url)
    body = _tool(http, voice_url, session, "add_note", '{"company": "Alfa", "note": "Hi"}', "c1")
    (action,) = customs(body.json()["events"], "talkie.action")
    decision = http.post(
        f"{voice_url}/api/talkie/actions/{action['id']}/decision",
        json={"decision": "confirm", "paramsHash": action["paramsHash"], "method": "voice"},
        headers=AUTH,
    )
    assert decision.status_code == 200, decision.text
    assert decision.json()["action"]["status"] == "done"
    recorded = http.get(
        f"{voice_url}/api/talkie/_test/decisions", params={"actionId": action["id"]}, headers=AUTH
    ).json()
    (entry,) = recorded["decisions"]
    assert entry["actionId"] == action["id"]
    assert (entry["decision"], entry["method"]) == ("confirm", "voice")
    assert entry["decidedAt"].endswith("Z")


def test_the_provider_refuses_bad_secrets_and_requests(http: httpx.Client, voice_url: str) -> None:
    session = _session(http, voice_url)
    url = session["signaling"]["url"]

    def offer(secret: str | None, content_type: str = "application/sdp") -> httpx.Response:
        headers = {"Content-Type": content_type}
        if secret is not None:
            headers["Authorization"] = f"Bearer {secret}"
        return http.post(url, content=TINY_OFFER, headers=headers)

    for response in (offer(None), offer("ek_wrong")):
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "invalid_api_key"
    # A malformed request is refused before the (single-use) secret is spent on it.
    assert offer(session["clientSecret"], "application/json").status_code == 400
    # The Talkie token is not a provider secret.
    assert offer(TEST_TOKEN).status_code == 401


def test_client_secrets_expire(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, fake_voice=True, voice_secret_seconds=0.2)
    session = _session(http, url)
    time.sleep(0.4)
    response = http.post(
        session["signaling"]["url"],
        content=TINY_OFFER,
        headers={
            "Authorization": f"Bearer {session['clientSecret']}",
            "Content-Type": "application/sdp",
        },
    )
    assert response.status_code == 401


def test_inspection_endpoints_exist_only_in_test_mode(
    http: httpx.Client, devserver: Callable[..., str]
) -> None:
    url = devserver(test_mode=False, dev_token=TEST_TOKEN, fake_voice=True)
    session = _session(http, url)
    inspect = http.get(
        f"{url}/api/talkie/_test/voice/sessions/{session['voiceSessionId']}", headers=AUTH
    )
    assert_error(inspect, 404, "not_found")
    assert_error(http.get(f"{url}/api/talkie/_test/decisions", headers=AUTH), 404, "not_found")
    provider = httpx.URL(session["signaling"]["url"])
    control = http.post(str(provider.copy_with(path="/fake-voice/script")), json={})
    assert control.status_code == 404
