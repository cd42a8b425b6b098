"""The real app on the reference hub, with `talkie bridge cuckoo` serving the demo agent of the
reference Talkie server (the pieces of `talkie demo --protocol cuckoo`): a prompt gives the
card and a streamed answer as messages, an action's Confirm tap decides it on the Talkie
server, and a dropped client socket shows reconnecting, then catches up with every message
once."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot

from talkie_tui.backends.cuckoo.backend import CuckooBackend
from talkie_tui.backends.cuckoo.backend import connect as connect_hub
from talkie_tui.commands.demo_cuckoo import CuckooDemo, cuckoo_demo
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.cuckoo.pushes import MessageDeltaPush
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.buttons import ButtonsView
from tests.ui.flows import put_and_send, screen_text, until

pytestmark = pytest.mark.slow

SIZE = (120, 40)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[CuckooDemo]:
    with cuckoo_demo(tmp_path / "demo") as running:
        yield running


@pytest.fixture
async def backend(demo: CuckooDemo) -> AsyncIterator[CuckooBackend]:
    """The person's hub backend; a lost socket waits 1.5 s before it is opened again."""
    hub = await connect_hub(
        demo.hub_url,
        tokens=StaticToken(demo.session_token),
        socket_options={"delays": (1.5,)},
    )
    yield hub
    await hub.aclose()


def app_on(backend: CuckooBackend, tmp_path: Path) -> TalkieApp:
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(backend=backend, settings=Settings(token_storage="file"), known=known)


async def ready_chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    chat = app.screen
    assert isinstance(chat, ChatScreen)
    await until(pilot, lambda: "Talkie Demo CRM" in screen_text(app))
    return chat


async def say(pilot: Pilot[None], text: str) -> None:
    app = pilot.app
    assert isinstance(app, TalkieApp)
    chat = app.screen
    assert isinstance(chat, ChatScreen)
    chat.composer.focus()
    await put_and_send(pilot, chat, text)


async def hub_messages(demo: CuckooDemo) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        answer = await http.get(
            f"{demo.hub_url}/v1/client/conversations/{demo.conversation_id}/messages",
            params={"limit": 100},
            headers={"Authorization": f"Bearer {demo.session_token}"},
        )
    answer.raise_for_status()
    return list(reversed(answer.json()["messages"]))


def shown_turns(chat: ChatScreen) -> list[str]:
    return [t.id for t in chat.session.conversation.turns if t.id.startswith("msg_")]


async def test_a_prompt_gives_the_card_and_a_streamed_answer(
    demo: CuckooDemo, backend: CuckooBackend, tmp_path: Path
) -> None:
    app = app_on(backend, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_chat(app, pilot)
        pushes = backend.feed.subscribe()  # what the hub's socket brought the app
        await say(pilot, "show me Alfa")
        await until(
            pilot,
            lambda: (
                "IČO: 12345678" in screen_text(app) and "is a client from Brno" in screen_text(app)
            ),
            timeout=20,
        )
        await until(pilot, lambda: chat.header.state != "streaming", timeout=20)
        text = screen_text(app)
        assert text.count("IČO: 12345678") == 1
        answers = [t for t in chat.session.conversation.turns if t.role == "assistant"]
        assert answers and {t.author for t in answers} == {"Talkie Demo CRM"}  # named, not "Agent"
        assert "Alfa s.r.o. – client, Brno, active" in text
        deltas: dict[str, str] = {}
        while (item := await pushes.get(timeout=0)) is not None:
            if isinstance(item, MessageDeltaPush):
                deltas[item.message_id] = deltas.get(item.message_id, "") + item.text
        pushes.close()
    answer = next(m for m in await hub_messages(demo) if "is a client" in m["body"].get("text", ""))
    assert deltas.get(answer["id"]) == answer["body"]["text"]  # it came streamed, in deltas
    messages = [m for m in await hub_messages(demo) if m["sender"]["kind"] == "agent"]
    assert all(m["status"] == "complete" for m in messages)


async def test_a_confirm_tap_decides_the_action_on_the_talkie_server(
    demo: CuckooDemo, backend: CuckooBackend, tmp_path: Path
) -> None:
    app = app_on(backend, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_chat(app, pilot)
        await say(pilot, "send the offer to Alfa")
        await until(pilot, lambda: bool(chat.query(ButtonsView)), timeout=20)
        await until(pilot, lambda: "Nothing goes out until you confirm" in screen_text(app), 20)
        view = chat.query(ButtonsView).first()  # the offer's (the undo comes after it)
        # A key in the guard's first 0.7 s is ignored by design: wait it out, as a person would.
        await until(pilot, lambda: not view.is_guarded)
        await pilot.press("ctrl+o")  # to the buttons; Confirm first
        await until(pilot, lambda: app.focused is not None and view in app.focused.ancestors)
        await until(pilot, lambda: not view.is_guarded)
        await pilot.press("enter")
        await until(pilot, lambda: "Confirmed: Send offer" in screen_text(app), timeout=20)
        await until(pilot, lambda: view.shown_taken is not None)
        assert view.shown_taken is not None and view.shown_taken.endswith(":confirm")
        svg = Path(os.environ.get("TALKIE_E2E_SVG", str(tmp_path / "cuckoo-e2e.svg")))
        svg.write_text(app.export_screenshot(), encoding="utf-8")
    offer = next(m for m in await hub_messages(demo) if m["body"].get("buttons"))
    confirm = offer["body"]["buttons"][0][0]
    assert offer["body"]["selected_button_id"] == confirm["id"]  # taken on the hub
    action_id = confirm["id"].split(":")[1]
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        decided = await http.get(
            f"{demo.talkie_url}/api/talkie/actions/{action_id}",
            headers={"Authorization": f"Bearer {demo.talkie_token}"},
        )
    assert decided.status_code == 200, decided.text
    assert decided.json()["status"] in ("running", "done")  # confirmed: in its undo window


async def test_a_dropped_socket_shows_reconnecting_and_catches_up_once(
    demo: CuckooDemo, backend: CuckooBackend, tmp_path: Path
) -> None:
    app = app_on(backend, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_chat(app, pilot)
        await say(pilot, "show me Alfa")
        await until(pilot, lambda: "is a client from Brno" in screen_text(app), timeout=20)
        await until(pilot, lambda: backend.feed.state == "open", timeout=10)
        await until(pilot, lambda: chat.header.state != "streaming", timeout=20)
        connection = backend.feed._socket._socket  # type: ignore[union-attr]
        assert connection is not None
        connection.transport.abort()  # the line drops: no close frame
        states: list[str] = []
        await until(pilot, lambda: backend.feed.state == "reconnecting", timeout=10)
        # Meanwhile the person writes from another device, and the agent answers.
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            sent = await http.post(
                f"{demo.hub_url}/v1/client/conversations/{demo.conversation_id}/messages",
                json={"text": "send the offer to Alfa"},
                headers={"Authorization": f"Bearer {demo.session_token}"},
            )
        assert sent.status_code == 201, sent.text

        def caught_up() -> bool:
            states.append(str(chat.header.state))
            text = screen_text(app)
            return "send the offer to Alfa" in text and "Nothing goes out until" in text

        await until(pilot, caught_up, timeout=30)
        await until(pilot, lambda: backend.feed.state == "open", timeout=10)
        assert "resuming" in states  # "◌ reconnecting…" while the socket was down
        text = screen_text(app)
        assert text.count("IČO: 12345678") == 1
        assert text.count("is a client from Brno") == 1
        assert text.count("Nothing goes out until you confirm") == 1
        # The demo agent's greeting, then the two questions and their answers.
        await until(pilot, lambda: len(shown_turns(chat)) == 7, timeout=10)
        turns = shown_turns(chat)
    record = [m["id"] for m in await hub_messages(demo)]
    assert turns == record  # every message of the hub's record, each once, in order
