"""The conversation on screen is followed live, whichever was opened last, and what the person
sees there is read: in the real app on the reference hub, with the independent test agent
writing on its own between answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from talkie_tui.backends.cuckoo.backend import CuckooBackend
from talkie_tui.ui.widgets.thread_list import ThreadList
from tests.ui.flows import screen_text, until
from tests.ui.test_cuckoo_reach import Reaching, app_on, reaching, ready_chat

pytestmark = pytest.mark.slow

__all__ = ["reaching"]  # the fixture, shared with the reach tests

SIZE = (120, 40)
LOOKS = 300  # looks at the hub's count, a tenth of a second apart at most


async def unread(backend: CuckooBackend, conversation_id: str) -> int:
    """The hub's unread count of the conversation, for the person of `backend`."""
    threads = await backend.threads()
    return next(thread.unread for thread in threads if thread.id == conversation_id)


async def until_read(pilot: Pilot[None], backend: CuckooBackend, conversation_id: str) -> None:
    """Wait until the hub counts nothing unread in the conversation."""
    for _ in range(LOOKS):
        if await unread(backend, conversation_id) == 0:
            return
        await pilot.pause(0.1)
    raise AssertionError(f"{conversation_id} stayed unread on the hub")


async def test_the_conversation_opened_last_is_followed_live_and_what_is_seen_is_read(
    reaching: Reaching, tmp_path: Path
) -> None:
    owner = await reaching.person()
    _first_id, first = await reaching.agent(owner.user_id, "First Agent")
    _second_id, second = await reaching.agent(owner.user_id, "Second Agent")
    first_id = (await first.wait_event(lambda e: e["type"] == "conversation.joined"))["data"][
        "conversation"
    ]["id"]
    second_id = (await second.wait_event(lambda e: e["type"] == "conversation.joined"))["data"][
        "conversation"
    ]["id"]
    await first.send(first_id, "Waiting for you before you came")
    backend = await reaching.backend(owner)
    assert await unread(backend, first_id) == 1
    app = app_on(backend, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_chat(app, pilot)
        thread_list = chat.query_one(ThreadList)
        await until(pilot, lambda: "First Agent (1)" in screen_text(app))
        for conversation_id in (first_id, second_id):
            await chat.open_thread(conversation_id).wait()
            await until(pilot, lambda c=conversation_id: chat.session.thread_id == c)
        await until_read(pilot, backend, first_id)
        assert "First Agent (1)" not in screen_text(app)
        assert all(getattr(t, "unread", 0) == 0 for t in thread_list.threads)
        await second.send(second_id, "Written on its own, to the second")
        await until(pilot, lambda: "Written on its own, to the second" in screen_text(app))
        await until_read(pilot, backend, second_id)
