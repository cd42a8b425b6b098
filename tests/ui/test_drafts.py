"""Issue 6, "Nothing lost": the composer's draft of each thread survives a quit, a crash, a restart.

The acceptance test runs the real `talkie connect` in a pseudo-terminal, types into it, kills
it with SIGKILL and starts it again: the draft is back in the composer.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from talkie_tui.ui.chat.drafts import (
    DRAFT_SAVE_DELAY,
    MAX_DRAFT_CHARS,
    NEW,
    DraftStore,
    drafts_path,
)
from tests.ui.flows import FAST, chat_screen, make_app, send, until
from tests.ui.pty import PtyTalkie

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")

# --- the store ----------------------------------------------------------------------------


def test_store_round_trip_private_and_bounded(talkie_home: Path) -> None:
    store = DraftStore()
    store.put("srv", None, "hello")
    store.put("srv", "t-1", "x" * (MAX_DRAFT_CHARS + 10))
    store.put("other", "t-1", "   ")  # blank: nothing to keep
    store.save()
    path = drafts_path()
    assert path.parent == talkie_home
    assert path.stat().st_mode & 0o777 == 0o600
    again = DraftStore()
    assert again.get("srv", NEW) == "hello"
    assert len(again.get("srv", "t-1")) == MAX_DRAFT_CHARS
    assert again.get("other", "t-1") == ""
    again.put("srv", None, "")
    again.save()
    assert DraftStore().get("srv", None) == ""


def test_store_merges_with_another_process(talkie_home: Path) -> None:
    first, second = DraftStore(), DraftStore()
    first.put("srv", "a", "from the first")
    first.save()
    second.put("srv", "b", "from the second")
    second.save()
    store = DraftStore()
    assert (store.get("srv", "a"), store.get("srv", "b")) == ("from the first", "from the second")


def test_a_message_not_taken_is_kept_beside_the_drafts_until_taken(talkie_home: Path) -> None:
    first, second = DraftStore(), DraftStore()
    first.hold("srv", None, "m-1", "sent while away")
    first.hold("srv", "t-1", "m-2", "in a thread")
    first.put("srv", None, "a draft")
    first.save()
    second.hold("srv", "t-1", "m-3", "from another talkie")
    second.save()
    store = DraftStore()
    assert [u.text for u in store.unsent("srv", NEW)] == ["sent while away"]
    assert [u.message_id for u in store.unsent("srv", "t-1")] == ["m-2", "m-3"]
    assert store.unsent("other", NEW) == [] and store.get("srv", NEW) == "a draft"
    store.taken("srv", "m-2")
    store.save()
    assert [u.message_id for u in DraftStore().unsent("srv", "t-1")] == ["m-3"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"[1, 2]",
        b'{"drafts": {"srv": {"t": {"text": 5}}}}',
        b'{"unsent": {"srv": {"m": {"thread": 1, "text": "x"}}, "bad": 3}}',
        b"\xff\xfe",
    ],
)
def test_corrupt_file_is_an_empty_store(talkie_home: Path, content: bytes) -> None:
    drafts_path().write_bytes(content)
    store = DraftStore()
    assert store.get("srv", "t") == "" and store.unsent("srv", "t") == []
    store.put("srv", "t", "fresh")
    store.save()
    assert DraftStore().get("srv", "t") == "fresh"


# --- in the app (Pilot) ---------------------------------------------------------------------


async def test_draft_survives_quit_and_restart(devserver, tmp_path: Path) -> None:
    """Type, quit: a new app on the same server shows the draft in the composer."""
    url = devserver(**FAST)
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.focus()
        await pilot.press(*"Rozepsaná zpráva")
        await pilot.press("ctrl+q")
    assert DraftStore().get(screen.client.server.server_id, NEW) == "Rozepsaná zpráva"

    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        assert screen.composer.text == "Rozepsaná zpráva"


async def test_each_thread_keeps_its_own_draft(devserver, tmp_path: Path) -> None:
    """Sending clears the draft; switching threads saves at once and brings the other back."""
    url = devserver(**FAST)
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        server_id = screen.client.server.server_id
        await send(pilot, screen, "talkie-test:echo first")
        thread_id = screen.session.thread_id
        assert thread_id
        assert DraftStore().get(server_id, NEW) == ""  # sent: nothing left of the draft
        screen.composer.insert("for the thread")
        await pilot.press("ctrl+n")  # no wait for the debounce: the switch saves at once
        assert DraftStore().get(server_id, thread_id) == "for the thread"
        assert screen.composer.text == ""
        screen.composer.insert("for a new one")
        screen.open_thread(thread_id)
        await until(pilot, lambda: screen.composer.text == "for the thread")
        assert DraftStore().get(server_id, NEW) == "for a new one"

    app = make_app(url, tmp_path, thread_id=thread_id)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        assert screen.composer.text == "for the thread"
        await pilot.press("ctrl+n")
        assert screen.composer.text == "for a new one"


# --- the acceptance test: the real program in a pseudo-terminal, killed -------------------


def drafts_on_disk() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(drafts_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {
        server: {thread: entry["text"] for thread, entry in threads.items()}
        for server, threads in data["drafts"].items()
    }


async def test_draft_survives_sigkill_of_the_real_program(devserver, tmp_path: Path) -> None:
    """Acceptance (issue 6): type in the real TUI, SIGKILL it, start again: the draft is back."""
    url = devserver(**FAST)
    draft = "Nothing lost: draft 42"

    first = PtyTalkie(url)
    try:
        first.wait_for("Talkie Demo CRM")
        first.wait_for("Message")
        time.sleep(0.5)  # the chat screen settles (focus on the composer)
        first.type(draft)
        first.wait_for(draft)  # drawn in the composer
        time.sleep(DRAFT_SAVE_DELAY + 1.0)  # past the debounce, then no clean exit at all
    finally:
        first.kill()
    assert first.process.returncode == -signal.SIGKILL
    assert [draft] == [text for threads in drafts_on_disk().values() for text in threads.values()]

    second = PtyTalkie(url)
    try:
        second.wait_for("Message")
        second.wait_for(draft)  # the restarted program draws the draft in its composer
    finally:
        second.kill()

    # And the composer itself holds it (same TALKIE_HOME, in-process under Pilot).
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        assert screen.composer.text == draft
        await until(pilot, lambda: screen.composer.has_focus)  # focus comes after the mount


async def test_a_demo_keeps_its_drafts_in_its_own_file(
    devserver, talkie_home: Path, tmp_path: Path
) -> None:
    """`talkie demo` gives the app a drafts file in its temporary folder: what is typed to its
    throwaway server never reaches the person's own drafts."""
    own = tmp_path / "demo" / "drafts.json"
    own.parent.mkdir()
    app = make_app(devserver(**FAST), tmp_path, drafts_file=own)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await chat_screen(app, pilot)
        await pilot.press(*"half a thought")
        await pilot.pause(DRAFT_SAVE_DELAY + 0.3)
        await until(pilot, own.exists)
        assert screen.composer.text == "half a thought"
    assert "half a thought" in own.read_text(encoding="utf-8")
    assert not drafts_path().exists()
