"""The hub is a window, not the archive: retention, media budgets, unsent uploads."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import httpx
import pytest

from tests.cuckoo_peer.person import error_of


async def upload(person: Any, name: str, content: bytes) -> str:
    answer = await person.http.post(
        "/v1/client/media", files={"file": (name, content, "text/plain")}
    )
    assert answer.status_code == 201, answer.text
    return str(answer.json()["media"]["id"])


async def poll(check: Any, timeout: float = 10.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await check()
        if value or asyncio.get_running_loop().time() > deadline:
            return value
        await asyncio.sleep(0.2)


@pytest.mark.hub(retention_seconds=2.0)
async def test_history_stops_at_the_window(chat_with: Any) -> None:
    chat = await chat_with()
    old = await chat.person.say(chat.conversation_id, "old news")
    await asyncio.sleep(2.5)
    new = await chat.person.say(chat.conversation_id, "fresh")

    page = await chat.person.history(chat.conversation_id)
    assert [m["id"] for m in page["messages"]] == [new["id"]]
    assert page["next_before"] is None
    assert page["trimmed"] is True
    answer = await chat.backend.http.get(f"/v1/agent/conversations/{chat.conversation_id}/messages")
    assert [m["id"] for m in answer.json()["messages"]] == [new["id"]]
    assert answer.json()["next_before"] is None
    assert old["id"] not in answer.text

    storage = await chat.person.http.get("/v1/client/me/storage")
    assert storage.status_code == 200, storage.text
    body = storage.json()
    assert set(body["media"]) >= {"used_bytes", "budget_bytes"}
    assert set(body["messages"]) >= {"kept_days", "kept_since"}
    kept_since = datetime.fromisoformat(body["messages"]["kept_since"].replace("Z", "+00:00"))
    created = datetime.fromisoformat(new["created_at"].replace("Z", "+00:00"))
    assert kept_since <= created


@pytest.mark.hub(person_media_budget=100)
async def test_over_budget_the_oldest_files_go_and_the_text_stays(chat_with: Any) -> None:
    chat = await chat_with()
    person = chat.person
    first = await upload(person, "one.txt", b"1" * 60)
    sent = await person.send(chat.conversation_id, "file one", attachments=[first])
    assert sent.status_code == 201, sent.text
    second = await upload(person, "two.txt", b"2" * 60)
    sent = await person.send(chat.conversation_id, "file two", attachments=[second])
    assert sent.status_code == 201, sent.text

    async def first_gone() -> bool:
        try:
            answer = await person.http.get(f"/v1/client/media/{first}")
        except httpx.TransportError:  # a read racing the delete (see the racing test)
            return False
        return answer.status_code == 404

    assert await poll(first_gone), "the oldest file outlived the budget"
    gone = await person.http.get(f"/v1/client/media/{first}")
    assert error_of(gone)["code"] == "media_not_found"
    agent_view = await chat.backend.http.get(f"/v1/agent/media/{first}")
    assert agent_view.status_code == 404
    kept = await person.http.get(f"/v1/client/media/{second}")
    assert kept.status_code == 200 and kept.content == b"2" * 60
    page = await person.history(chat.conversation_id)
    assert {m["body"].get("text") for m in page["messages"]} >= {"file one", "file two"}
    storage = (await person.http.get("/v1/client/me/storage")).json()
    assert storage["media"]["used_bytes"] <= storage["media"]["budget_bytes"] == 100


@pytest.mark.hub(unsent_upload_seconds=1.0)
async def test_a_file_nobody_sends_is_swept_away(chat_with: Any) -> None:
    chat = await chat_with(connect=False)
    media_id = await upload(chat.person, "draft.txt", b"never sent")
    await asyncio.sleep(2.0)  # past the day (1 s here) and a sweep; not racing the delete
    answer = await chat.person.http.get(f"/v1/client/media/{media_id}")
    assert answer.status_code == 404, "the unsent upload was kept"
    assert error_of(answer)["code"] == "media_not_found"
    late = await chat.person.send(chat.conversation_id, "now", attachments=[media_id])
    assert late.status_code in (404, 422), late.text
    error_of(late)


# A person uploads here: `person_upload_rate` is the setting that lets 96 uploads through
# (`upload_rate` is the agents'; with it alone the uploads met 429 before any race).
@pytest.mark.hub(unsent_upload_seconds=0.5, person_upload_rate=(1000.0, 1000))
async def test_a_download_racing_the_sweep_is_whole_or_404(chat_with: Any) -> None:
    """While the sweeper removes files, each download is the whole file or a 404 envelope."""
    chat = await chat_with(connect=False)
    content = b"0123456789" * 100
    broken: list[str] = []

    async def hammer(media_id: str) -> None:
        deadline = asyncio.get_running_loop().time() + 8
        while asyncio.get_running_loop().time() < deadline:
            try:
                answer = await chat.person.http.get(f"/v1/client/media/{media_id}")
            except httpx.TransportError as failure:
                broken.append(f"{media_id}: {failure!r}")
                return
            if answer.status_code == 404:
                assert error_of(answer)["code"] == "media_not_found"
                return
            if answer.status_code != 200 or answer.content != content:
                broken.append(f"{media_id}: {answer.status_code} {len(answer.content)} bytes")
                return

    for _ in range(6):  # the window is narrow: a few rounds of sixteen files, two readers each
        ids = [await upload(chat.person, f"f{i}.txt", content) for i in range(16)]
        await asyncio.gather(*(hammer(media_id) for media_id in ids * 2))
        if broken:
            break
    assert broken == []
