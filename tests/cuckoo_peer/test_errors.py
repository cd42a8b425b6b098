"""The error envelope `{"error": {code, message, field?, request_id}}` for bad input."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.cuckoo_peer.person import error_of, new_id


def _path(chat: Any) -> str:
    return f"/v1/agent/conversations/{chat.conversation_id}/messages"


async def test_an_unknown_field_is_rejected_and_named(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    answer = await chat.backend.post_message(chat.conversation_id, text="hi", txet="typo")
    assert answer.status_code == 422, answer.text
    error = error_of(answer)
    assert error["code"] == "unknown_field"
    assert error.get("field") == "txet"
    page = await chat.person.history(chat.conversation_id)
    assert page["messages"] == []


async def test_the_client_api_rejects_unknown_fields_too(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    answer = await chat.person.send(chat.conversation_id, "hi", colour="blue")
    assert answer.status_code == 422, answer.text
    assert error_of(answer)["code"] == "unknown_field"


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"", b"[1, 2]", b'"text"', b'{"text": "a"} trailing'],
    ids=["broken", "empty", "array", "string", "trailing"],
)
async def test_a_body_that_is_not_one_json_object_is_422(chat_with: Any, content: bytes) -> None:
    chat = await chat_with(connect=False)
    answer = await chat.backend.http.post(
        _path(chat), content=content, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 422, answer.text
    error_of(answer)


async def test_a_body_that_is_not_json_by_type_is_422(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    answer = await chat.backend.http.post(
        _path(chat),
        content=b"text=hi",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status_code == 422, answer.text
    error_of(answer)


async def test_a_body_over_one_mebibyte_is_422_body_too_large(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    body = json.dumps({"text": "x" * (1024 * 1024)}).encode()
    assert len(body) > 1024 * 1024
    answer = await chat.backend.http.post(
        _path(chat), content=body, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 422, answer.text
    assert error_of(answer)["code"] == "body_too_large"


async def test_text_over_8000_is_refused_but_a_body_under_the_cap_is_read(chat_with: Any) -> None:
    """A body under 1 MiB is read and judged on its content (invalid_text, not body_too_large)."""
    chat = await chat_with(connect=False)
    answer = await chat.backend.post_message(chat.conversation_id, text="x" * 8001)
    assert answer.status_code == 422, answer.text
    assert error_of(answer)["code"] == "invalid_text"


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer",
        "Bearer nonsense",
        "Bearer bnd_sec_" + "0" * 52,
        "Basic dXNlcjpwYXNz",
    ],
    ids=["missing", "empty", "no-prefix", "unknown-secret", "basic"],
)
async def test_a_missing_or_wrong_credential_is_401(hub: str, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    async with httpx.AsyncClient(base_url=hub, trust_env=False) as http:
        answer = await http.get("/v1/agent/me", headers=headers)
    assert answer.status_code == 401, answer.text
    error_of(answer)


@pytest.mark.parametrize("prefix", ["ses_tok_", "mgt_tok_", "bnd_tok_", "sec_"])
async def test_the_binding_secret_under_another_prefix_is_401(chat_with: Any, prefix: str) -> None:
    chat = await chat_with(connect=False)
    rest = chat.secret.removeprefix("bnd_sec_")
    async with httpx.AsyncClient(base_url=chat.hub, trust_env=False) as http:
        answer = await http.get("/v1/agent/me", headers={"Authorization": f"Bearer {prefix}{rest}"})
    assert answer.status_code == 401, answer.text
    error_of(answer)
    # The right prefix still works.
    me = await chat.backend.me()
    assert me["agent"]["id"] == chat.agent["id"]


async def test_a_binding_secret_does_not_unlock_the_client_or_mgmt_api(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    for path in ("/v1/client/conversations", "/v1/mgmt/agents"):
        answer = await chat.backend.http.get(path)
        assert answer.status_code in (401, 403), (path, answer.text)
        error_of(answer)


async def test_sending_into_a_conversation_the_agent_is_not_in(chat_with: Any) -> None:
    mine = await chat_with(connect=False)
    theirs = await chat_with(connect=False)
    answer = await mine.backend.post_message(theirs.conversation_id, text="hello, stranger")
    assert answer.status_code in (403, 404), answer.text
    error_of(answer)
    page = await theirs.person.history(theirs.conversation_id)
    assert page["messages"] == []

    answer = await mine.backend.post_message(new_id("cnv"), text="hello, nobody")
    assert answer.status_code in (403, 404), answer.text
    error_of(answer)

    # And reading it is refused the same way.
    answer = await mine.backend.http.get(f"/v1/agent/conversations/{theirs.conversation_id}")
    assert answer.status_code in (403, 404), answer.text
    error_of(answer)


async def test_request_ids_differ(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    first = await chat.backend.post_message(chat.conversation_id, text="")
    second = await chat.backend.post_message(chat.conversation_id, text="")
    assert first.status_code == second.status_code == 422
    assert error_of(first)["request_id"] != error_of(second)["request_id"]


async def test_idempotent_http_send_is_201_then_200(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    first = await chat.backend.post_message(chat.conversation_id, text="hi", idempotency_key="k")
    second = await chat.backend.post_message(chat.conversation_id, text="hi", idempotency_key="k")
    assert (first.status_code, second.status_code) == (201, 200), (first.text, second.text)
    assert first.json()["message"]["id"] == second.json()["message"]["id"]


STATUSES = {401, 403, 404, 409, 422, 429, 500}


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("GET", "/v1/agent/events", {"since": "garbage"}),
        ("GET", "/v1/agent/events", {"since": "msg_01m8tfp94be13t1fzhr0gd3tgr"}),
        ("GET", "/v1/agent/events", {"limit": "many"}),
        ("DELETE", "/v1/agent/me", {}),
        ("GET", "/v1/agent/conversations/not-an-id", {}),
        ("GET", "/v1/agent/no-such-thing", {}),
    ],
    ids=["since-garbage", "since-wrong-prefix", "limit-words", "method", "bad-id", "route"],
)
async def test_no_400_only_the_listed_statuses(
    chat_with: Any, method: str, path: str, params: dict[str, str]
) -> None:
    chat = await chat_with(connect=False)
    answer = await chat.backend.http.request(method, path, params=params)
    assert answer.status_code in STATUSES, answer.text
    assert answer.status_code >= 400
    error_of(answer)


async def test_the_client_api_caps_bodies_too(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    body = json.dumps({"text": "x" * (1024 * 1024)}).encode()
    answer = await chat.person.http.post(
        f"/v1/client/conversations/{chat.conversation_id}/messages",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 422, answer.text
    assert error_of(answer)["code"] == "body_too_large"
