"""Reaching agents in the real app, on the reference hub over real HTTP and WebSocket on
127.0.0.1, with the independent test agent (`tests/cuckoo_peer`) as the agent's backend:

- `talkie connect HUB --pair CODE`: the code is looked up, a confirmation (Cancel focused)
  asks, Add opens the conversation, the agent hears `conversation.joined` with the code's
  payload, and its starters are one-key choices whose words go as the first message;
- "Add an agent by code" from the palette: a wrong code says why and is asked again; Esc on
  the confirmation adds nothing;
- "Find agents" lists the catalogue, Enter adds the agent and opens its conversation;
- "Contact": pinned first in the list, muted (no unread count), archived (under "Archived"),
  reported (reason, note, the message), blocked (the conversation says so and takes no
  message), removed — the risky ones each after a confirmation.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input, OptionList

from talkie_tui.backends.cuckoo import sign_in
from talkie_tui.backends.cuckoo.backend import CuckooBackend, connect
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.reach import BLOCKED_ID, STARTERS_ID
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.reach import (
    ArchivedScreen,
    CatalogueScreen,
    CodePromptScreen,
    ContactScreen,
    ReportScreen,
)
from talkie_tui.ui.widgets.buttons import QuickRepliesView
from talkie_tui.ui.widgets.thread_list import ThreadList
from tests.cuckoo_peer.agent import AgentBackend
from tests.ui.flows import screen_text, until

pytestmark = pytest.mark.slow

SIZE = (120, 40)
STARTERS = ["When is the next train?", "Delays today"]


class Reaching:
    """A hub with its "mailed" codes, people signed in, agents with their test backends."""

    def __init__(self, url: str, codes: dict[str, str], db: Path) -> None:
        self.url = url
        self.codes = codes
        self.db = db
        self.peers: list[AgentBackend] = []
        self.backends: list[CuckooBackend] = []

    async def person(self) -> sign_in.SignedIn:
        email = f"p{os.urandom(4).hex()}@example.com"
        await sign_in.start(self.url, email)
        return await sign_in.verify(self.url, email, self.codes[email], device_name="test")

    async def mgmt(self, owner: str, method: str, path: str, body: dict[str, Any]) -> Any:
        async with httpx.AsyncClient(base_url=self.url, timeout=10, trust_env=False) as http:
            answer = await http.request(method, path, json=body, headers={"X-Dev-User": owner})
        assert answer.status_code in (200, 201), answer.text
        return answer.json()

    async def agent(self, owner: str, name: str, **fields: Any) -> tuple[str, AgentBackend]:
        """An agent of `owner` with a socket binding, served by the test agent."""
        handle = "bot-" + os.urandom(4).hex()
        made = await self.mgmt(
            owner, "POST", "/v1/mgmt/agents", {"handle": handle, "display_name": name, **fields}
        )
        agent_id = str(made["agent"]["id"])
        bound = await self.mgmt(
            owner, "POST", f"/v1/mgmt/agents/{agent_id}/binding", {"mode": "socket"}
        )
        peer = AgentBackend(self.url, bound["secret"])
        self.peers.append(peer)
        await peer.connect()
        return agent_id, peer

    async def backend(self, person: sign_in.SignedIn) -> CuckooBackend:
        backend = await connect(self.url, tokens=person.tokens())
        self.backends.append(backend)
        return backend

    def reports(self) -> list[tuple[str, str, str | None, str | None]]:
        with sqlite3.connect(self.db) as db:
            rows = db.execute("SELECT agent_id, reason, note, message_id FROM reports")
            return [tuple(row) for row in rows.fetchall()]


@pytest.fixture
async def reaching(cuckoo_hub: Callable[..., str], tmp_path: Path) -> AsyncIterator[Reaching]:
    codes: dict[str, str] = {}
    db = tmp_path / "reach-hub.sqlite3"
    url = cuckoo_hub(
        db_path=db,
        code_sink=lambda email, code: codes.__setitem__(email, code),
        code_rate=(1000.0, 1000),
    )
    made = Reaching(url, codes, db)
    yield made
    for backend in made.backends:
        await backend.aclose()
    for peer in made.peers:
        await peer.close()


def app_on(backend: CuckooBackend, tmp_path: Path, **options: Any) -> TalkieApp:
    known = KnownServers.load(tmp_path / "servers.json")
    settings = Settings(token_storage="file")
    return TalkieApp(backend=backend, settings=settings, known=known, **options)


async def ready_chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
    chat = app.screen
    assert isinstance(chat, ChatScreen)
    return chat


async def choose(pilot: Pilot[None], screen_type: type, option_id: str) -> None:
    """In the box on top, highlight the option `option_id` and press Enter."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, screen_type) and app.screen.is_mounted)
    options = app.screen.query_one(OptionList)
    options.focus()
    options.highlighted = options.get_option_index(option_id)
    await pilot.press("enter")


async def confirm(pilot: Pilot[None]) -> None:
    """A confirmation box: Cancel has the focus; a deliberate move to the other, then Enter."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.is_mounted)
    assert app.focused is not None and app.focused.id == "cancel"
    await pilot.press("right", "enter")


def test_connect_takes_a_pairing_code() -> None:
    from talkie_tui.cli import build_parser, connect_app

    args = build_parser().parse_args(["connect", "127.0.0.1:9", "--pair", "abcd-efgh"])
    assert args.pair == "abcd-efgh"
    assert connect_app(args)._pair_code == "abcd-efgh"


def listed_ids(chat: ChatScreen) -> list[str]:
    return [t.id for t in chat.query_one(ThreadList).threads]


async def test_a_pairing_code_on_the_command_line_adds_the_agent_and_offers_its_starters(
    reaching: Reaching, tmp_path: Path
) -> None:
    owner = await reaching.person()
    agent_id, peer = await reaching.agent(
        owner.user_id, "Train Times", description="When the trains go", starters=STARTERS
    )
    minted = await reaching.mgmt(
        owner.user_id,
        "POST",
        f"/v1/mgmt/agents/{agent_id}/pair-tokens",
        {"label": "station", "payload": {"customer_ref": "SBI-8812"}},
    )
    person = await reaching.person()
    backend = await reaching.backend(person)
    app = app_on(backend, tmp_path, pair_code=minted["code"])
    async with app.run_test(size=SIZE) as pilot:
        # The code is looked up as soon as the chat is up: its confirmation may be on top.
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=15)
        chat = next(s for s in app.screen_stack if isinstance(s, ChatScreen))
        await until(pilot, lambda: "Add Train Times?" in screen_text(app))
        text = screen_text(app)
        assert "When the trains go" in text and "station" in text
        assert not peer.events_of("conversation.joined")[1:]  # only the owner's, so far
        await confirm(pilot)
        await until(pilot, lambda: chat.session.thread_id is not None, timeout=15)
        conversation_id = chat.session.thread_id
        joined = await peer.wait_event(
            lambda e: (
                e["type"] == "conversation.joined"
                and e["data"]["conversation"]["id"] == conversation_id
            )
        )
        assert joined["data"]["pair_token"] == {
            "id": minted["pair_token"]["id"],
            "payload": {"customer_ref": "SBI-8812"},
        }
        await until(pilot, lambda: bool(chat.transcript.query(QuickRepliesView)), timeout=15)
        turns = chat.session.conversation.turns
        assert turns[0].id == STARTERS_ID
        assert chat.composer.has_focus  # nothing took the keyboard
        view = chat.transcript.query(QuickRepliesView).first()
        await until(pilot, lambda: not view.is_guarded)
        await pilot.press("ctrl+o")  # the deliberate move to the starters
        await until(pilot, lambda: app.focused is not None and view in app.focused.ancestors)
        await until(pilot, lambda: not view.is_guarded)
        await pilot.press("enter")
        said = await peer.wait_event(
            lambda e: (
                e["type"] == "message.created"
                and e["data"]["message"]["body"].get("text") == STARTERS[0]
            )
        )
        assert said["data"]["conversation"]["id"] == conversation_id
        await until(pilot, lambda: conversation_id in listed_ids(chat), timeout=15)
        # Said: the starters go, and with them their bubble (nothing else was in it).
        starters = chat.transcript.turn_view(turns[0])
        assert starters is not None
        await until(pilot, lambda: not view.display and not starters.display)


async def test_find_agents_in_the_thread_lists_header_by_mouse_and_by_keys(
    reaching: Reaching, tmp_path: Path
) -> None:
    owner = await reaching.person()
    _listed_id, listed_peer = await reaching.agent(
        owner.user_id, "Listed Helper", description="Helps anyone", listed=True
    )
    person = await reaching.person()
    await reaching.agent(person.user_id, "My Own Bot")
    backend = await reaching.backend(person)
    app = app_on(backend, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_chat(app, pilot)
        await until(pilot, lambda: len(listed_ids(chat)) == 1, timeout=15)
        find = chat.query_one("#thread-find", Button)
        await until(pilot, lambda: find.region.height == 1)
        assert "Find agents" in screen_text(app)

        await pilot.press("ctrl+b", "f")  # the keys: from the composer to the list, then f
        await until(pilot, lambda: isinstance(app.screen, CatalogueScreen))
        await until(pilot, lambda: "Helps anyone" in screen_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is chat)

        await pilot.click("#thread-find")  # the mouse
        await until(pilot, lambda: isinstance(app.screen, CatalogueScreen))
        await choose(pilot, CatalogueScreen, "0")
        await until(pilot, lambda: len(listed_ids(chat)) == 2, timeout=15)
        await listed_peer.wait_event(lambda e: e["type"] == "conversation.joined")
        # What is typed next goes to the agent just added, not to the list's keys.
        await until(pilot, lambda: chat.composer.has_focus)


async def test_the_catalogue_adds_an_agent_and_contacts_are_managed(
    reaching: Reaching, tmp_path: Path
) -> None:
    owner = await reaching.person()
    listed_id, listed_peer = await reaching.agent(
        owner.user_id, "Listed Helper", description="Helps anyone", listed=True
    )
    person = await reaching.person()
    mine_id, mine_peer = await reaching.agent(person.user_id, "My Own Bot")
    backend = await reaching.backend(person)
    app = app_on(backend, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_chat(app, pilot)
        await until(pilot, lambda: len(listed_ids(chat)) == 1, timeout=15)
        app.action_find_agents()
        await until(pilot, lambda: isinstance(app.screen, CatalogueScreen))
        await until(pilot, lambda: "Helps anyone" in screen_text(app))
        assert "Listed Helper" in screen_text(app)
        await choose(pilot, CatalogueScreen, "0")
        await until(pilot, lambda: chat.session.thread_id is not None, timeout=15)
        added = chat.session.thread_id
        await listed_peer.wait_event(
            lambda e: (
                e["type"] == "conversation.joined" and e["data"]["conversation"]["id"] == added
            )
        )
        await until(pilot, lambda: len(listed_ids(chat)) == 2, timeout=15)
        mine = next(i for i in listed_ids(chat) if i != added)
        app.action_find_agents()  # once added, the catalogue says so
        await until(pilot, lambda: isinstance(app.screen, CatalogueScreen))
        await until(pilot, lambda: "in your contacts" in screen_text(app))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is chat)

        # Pinned: first in the list, though the other conversation is newer.
        chat.open_thread(mine)
        await until(pilot, lambda: chat.session.thread_id == mine)
        app.action_contact()
        await choose(pilot, ContactScreen, "pin")
        await until(pilot, lambda: listed_ids(chat)[:1] == [mine], timeout=15)
        await until(pilot, lambda: "▲" in screen_text(app))

        # Muted: the list says so, and shows no unread count for it.
        await mine_peer.send(chat.session.thread_id, "are you there?")
        app.action_contact()
        await choose(pilot, ContactScreen, "mute:0")
        await until(pilot, lambda: "muted" in screen_text(app), timeout=15)
        thread = chat.query_one(ThreadList).threads[0]
        assert getattr(thread, "muted", False) is True

        # Reported: the reason, a note, and the agent's message selected in the transcript.
        chat.open_thread(added)
        await until(pilot, lambda: chat.session.thread_id == added)
        sent = await listed_peer.send(added, "buy cheap watches")
        message_id = sent["message"]["id"]
        await until(pilot, lambda: chat.session.conversation.turn(message_id) is not None, 15)
        await until(
            pilot,
            lambda: (
                chat.transcript.turn_view(chat.session.conversation.turn(message_id)) is not None
            ),
        )
        chat.transcript.select(chat.session.conversation.turn(message_id))
        app.action_contact()
        await choose(pilot, ContactScreen, "report")
        await choose(pilot, ReportScreen, "spam")
        await pilot.press(*"sells watches", "enter")
        assert app.focused is not None and app.focused.id == "report-cancel"
        await pilot.press("tab", "enter")
        await until(pilot, lambda: bool(reaching.reports()), timeout=15)
        assert reaching.reports() == [(listed_id, "spam", "sells watches", message_id)]

        # Blocked: a confirmation first; then the conversation says so and takes nothing.
        app.action_contact()
        await choose(pilot, ContactScreen, "block")
        await confirm(pilot)
        left = await listed_peer.wait_event(lambda e: e["type"] == "conversation.left")
        assert left["data"]["reason"] == "user_blocked"
        await until(pilot, lambda: chat.session.conversation.turns[0].id == BLOCKED_ID, 15)
        await until(pilot, lambda: "You blocked this agent" in screen_text(app))
        assert "code:" not in screen_text(app)  # talkie's own words carry no server code
        assert chat.composer.read_only
        assert chat.has_class("-agent-blocked")  # no "away: delivered when it is back" line

        # Archived: out of the list, found under "Archived", and it opens from there.
        chat.open_thread(mine)
        await until(pilot, lambda: chat.session.thread_id == mine)
        await until(pilot, lambda: not chat.composer.read_only)
        assert not chat.has_class("-agent-blocked")
        app.action_contact()
        await choose(pilot, ContactScreen, "archive")
        await until(pilot, lambda: mine not in listed_ids(chat), timeout=15)
        app.action_archived()
        await until(pilot, lambda: isinstance(app.screen, ArchivedScreen))
        await until(pilot, lambda: "My Own Bot" in screen_text(app))
        await choose(pilot, ArchivedScreen, "0")
        await until(pilot, lambda: chat.session.thread_id == mine)

        # Removed: after a confirmation, out of every list.
        chat.open_thread(added)
        await until(pilot, lambda: chat.session.thread_id == added)
        app.action_contact()
        await choose(pilot, ContactScreen, "remove")
        await confirm(pilot)
        await until(pilot, lambda: added not in listed_ids(chat), timeout=15)
        assert chat.session.thread_id is None  # its conversation left the screen too
    assert mine_id and listed_peer and mine_peer


async def test_a_code_from_the_palette_is_looked_up_and_a_wrong_one_says_why(
    reaching: Reaching, tmp_path: Path
) -> None:
    owner = await reaching.person()
    agent_id, peer = await reaching.agent(owner.user_id, "Shop Helper")
    minted = await reaching.mgmt(
        owner.user_id, "POST", f"/v1/mgmt/agents/{agent_id}/pair-tokens", {}
    )
    code = minted["code"]
    person = await reaching.person()
    backend = await reaching.backend(person)
    app = app_on(backend, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        chat = await ready_chat(app, pilot)
        app.action_add_by_code()
        await until(pilot, lambda: isinstance(app.screen, CodePromptScreen))
        await pilot.press(*"nosuchcode", "enter")
        await until(pilot, lambda: "This code adds nobody" in screen_text(app))
        assert isinstance(app.screen, CodePromptScreen)  # asked again, the words kept
        prompt = app.screen.query_one(Input)
        prompt.value = ""
        await pilot.press(*f"{code[:5].upper()}-{code[5:]}", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")  # not now: nothing is added
        await until(pilot, lambda: isinstance(app.screen, ChatScreen))
        await pilot.pause(0.3)
        assert chat.session.thread_id is None and listed_ids(chat) == []
        app.action_add_by_code()
        await until(pilot, lambda: isinstance(app.screen, CodePromptScreen))
        await pilot.press(*code, "enter")
        await confirm(pilot)
        await until(pilot, lambda: chat.session.thread_id is not None, timeout=15)
        joined = await peer.wait_event(
            lambda e: (
                e["type"] == "conversation.joined"
                and e["data"]["conversation"]["id"] == chat.session.thread_id
            )
        )
        assert joined["data"]["pair_token"]["id"] == minted["pair_token"]["id"]
