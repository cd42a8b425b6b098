"""Outside dev mode: real sign-in, the three credential prefixes, and no loopback webhooks."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest

from tests.cuckoo_peer.conftest import handle
from tests.cuckoo_peer.person import error_of, new_id

CODES: list[tuple[str, str]] = []


def sink(*args: str) -> None:
    CODES.append(tuple(args))  # (email, code) in some order


def _code_for(email: str) -> str:
    for args in reversed(CODES):
        if email in args:
            return next(a for a in args if re.fullmatch(r"\d{6}", a))
    raise AssertionError(f"no code for {email}: {CODES}")


async def sign_in(hub: str, email: str) -> str:
    async with httpx.AsyncClient(base_url=hub, trust_env=False) as http:
        started = await http.post("/v1/auth/email/start", json={"email": email})
        assert started.status_code == 204, started.text
        verified = await http.post(
            "/v1/auth/email/verify",
            json={"email": email, "code": _code_for(email), "device_name": "peer"},
        )
        assert verified.status_code == 200, verified.text
        token = verified.json()["token"]
        assert token.startswith("ses_tok_"), token
        return str(token)


def bearer(hub: str, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=hub, headers={"Authorization": f"Bearer {token}"}, trust_env=False
    )


pytestmark = pytest.mark.hub(dev=False, code_sink=sink)


async def test_the_dev_header_means_nothing_outside_dev(hub: str) -> None:
    async with httpx.AsyncClient(base_url=hub, trust_env=False) as http:
        answer = await http.get("/v1/client/conversations", headers={"X-Dev-User": new_id("usr")})
    assert answer.status_code == 401, answer.text
    error_of(answer)


async def test_each_credential_unlocks_its_own_apis(hub: str) -> None:
    session = await sign_in(hub, f"{handle()}@example.test")
    async with bearer(hub, session) as http:
        assert (await http.get("/v1/client/conversations")).status_code == 200
        assert (await http.get("/v1/mgmt/agents")).status_code == 200
        refused = await http.get("/v1/agent/me")
        assert refused.status_code in (401, 403), refused.text
        error_of(refused)
        made = await http.post("/v1/client/api-keys", json={"name": "peer"})
        assert made.status_code in (200, 201), made.text
        key = made.json()["key"]
        assert key.startswith("mgt_tok_"), key
        agent = await http.post(
            "/v1/mgmt/agents", json={"handle": handle(), "display_name": "Signed"}
        )
        assert agent.status_code in (200, 201), agent.text
        agent_id = agent.json()["agent"]["id"]
        bound = await http.post(f"/v1/mgmt/agents/{agent_id}/binding", json={"mode": "socket"})
        secret = bound.json()["secret"]

    async with bearer(hub, key) as http:
        assert (await http.get("/v1/mgmt/agents")).status_code == 200
        for path in ("/v1/client/conversations", "/v1/agent/me"):
            refused = await http.get(path)
            assert refused.status_code in (401, 403), (path, refused.text)
            error_of(refused)

    async with bearer(hub, secret) as http:
        assert (await http.get("/v1/agent/me")).status_code == 200
        for path in ("/v1/client/conversations", "/v1/mgmt/agents"):
            refused = await http.get(path)
            assert refused.status_code in (401, 403), (path, refused.text)
            error_of(refused)

    # A credential under another prefix is simply wrong: 401.
    for token, path in (
        ("bnd_sec_" + session.removeprefix("ses_tok_"), "/v1/agent/me"),
        ("ses_tok_" + secret.removeprefix("bnd_sec_"), "/v1/client/conversations"),
        ("ses_tok_" + key.removeprefix("mgt_tok_"), "/v1/mgmt/agents"),
        ("mgt_tok_" + session.removeprefix("ses_tok_"), "/v1/mgmt/agents"),
    ):
        async with bearer(hub, token) as http:
            answer = await http.get(path)
        assert answer.status_code == 401, (token[:8], path, answer.text)
        error_of(answer)


async def test_a_loopback_plain_http_webhook_is_refused_outside_dev(
    hub: str, receivers: Any
) -> None:
    owner = await sign_in(hub, f"{handle()}@example.test")
    person = await sign_in(hub, f"{handle()}@example.test")
    receiver = receivers()
    async with bearer(hub, owner) as http:
        agent = (
            await http.post("/v1/mgmt/agents", json={"handle": handle(), "display_name": "Hook"})
        ).json()["agent"]
        bound = await http.post(
            f"/v1/mgmt/agents/{agent['id']}/binding",
            json={"mode": "webhook", "webhook_url": receiver.url},
        )
        if bound.status_code == 422:
            error_of(bound)
            return
        assert bound.status_code in (200, 201), bound.text
        receiver.secret = bound.json()["secret"]
        minted = await http.post(f"/v1/mgmt/agents/{agent['id']}/pair-tokens", json={})
    async with bearer(hub, person) as http:
        accepted = await http.post(f"/v1/client/pair/{minted.json()['code']}/accept")
        conversation_id = accepted.json()["conversation"]["id"]
        sent = await http.post(
            f"/v1/client/conversations/{conversation_id}/messages", json={"text": "hello"}
        )
        assert sent.status_code == 201, sent.text
    await asyncio.sleep(3)
    assert receiver.deliveries == [], "the hub posted to a loopback address outside dev mode"


async def test_a_webhook_url_must_be_a_url(hub: str) -> None:
    owner = await sign_in(hub, f"{handle()}@example.test")
    async with bearer(hub, owner) as http:
        agent = (
            await http.post("/v1/mgmt/agents", json={"handle": handle(), "display_name": "Hook"})
        ).json()["agent"]
        for url in ("ftp://127.0.0.1/hook", "not a url", "https://"):
            bound = await http.post(
                f"/v1/mgmt/agents/{agent['id']}/binding",
                json={"mode": "webhook", "webhook_url": url},
            )
            assert bound.status_code == 422, (url, bound.text)
            error_of(bound)
