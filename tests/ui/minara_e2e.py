"""The real `TalkieApp` on the real reference gateway (test mode), for the end-to-end tests.

Every wait is for a condition (`until`), never a fixed sleep taken as the proof; the gateway is
also driven directly over HTTP where another client acts (answers a question, starts a turn,
drops the sockets).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from textual.pilot import Pilot

from talkie_tui import backends
from talkie_tui.chat.turns import TextPart, Turn
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.tokens import StaticToken
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.screens.chat import ChatScreen
from talkie_tui.ui.widgets.header import TalkieHeader
from talkie_tui.ui.widgets.question import QuestionView
from tests.helpers import AUTH, TEST_TOKEN
from tests.ui.test_chat_flows import screen_text, until

__all__ = [
    "SIZE",
    "WAIT",
    "answer_text",
    "ask",
    "chat",
    "gateway_app",
    "gateway_http",
    "last_answer",
    "notices",
    "open_question",
    "say",
    "screen_text",
    "session_done",
    "until",
]

SIZE = (120, 40)
WAIT = 20.0  # seconds a condition may take on a loaded two-core machine


async def gateway_app(gateway_url: str, tmp_path: Path) -> TalkieApp:
    """The app on the gateway, its backend connected as `talkie connect` connects it."""
    backend = await backends.connect(gateway_url, protocol="minara", tokens=StaticToken(TEST_TOKEN))
    settings = Settings(downloads_dir=tmp_path / "downloads", token_storage="file")
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(settings=settings, known=known, backend=backend)


@asynccontextmanager
async def gateway_http(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """Another client of the same gateway (plain httpx with the token)."""
    async with httpx.AsyncClient(base_url=gateway_url, headers=AUTH, timeout=10) as http:
        yield http


async def chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    """The chat screen, once it says "connected"."""
    await until(
        pilot,
        lambda: isinstance(app.screen, ChatScreen) and bool(app.screen.query(TalkieHeader)),
        WAIT,
    )
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected", WAIT)
    return screen


async def say(pilot: Pilot[None], screen: ChatScreen, text: str, *, wait: bool = True) -> None:
    """Type `text` into the composer and press Enter; with `wait`, until its answer ended."""
    screen.composer.focus()
    screen.composer.insert(text)
    turns = len(screen.session.conversation.turns)
    await pilot.press("enter")
    await until(pilot, lambda: len(screen.session.conversation.turns) > turns, WAIT)
    if wait:
        await until(pilot, lambda: not screen.answering, WAIT)
    await pilot.pause()


def notices(app: TalkieApp) -> str:
    """The words of every notification shown so far (with `run_test(notifications=True)`)."""
    return " ".join(str(note.message) for note in app._notifications)


def last_answer(screen: ChatScreen) -> Turn | None:
    """The newest answer of the agent in the conversation on screen."""
    for turn in reversed(screen.session.conversation.turns):
        if turn.role == "assistant":
            return turn
    return None


def answer_text(screen: ChatScreen) -> str:
    """The text of the newest answer, as the reducer holds it."""
    turn = last_answer(screen)
    if turn is None:
        return ""
    return "".join(part.text for part in turn.parts if isinstance(part, TextPart))


async def open_question(pilot: Pilot[None], screen: ChatScreen) -> QuestionView:
    """The one open question on screen, once its input guard is over."""
    await until(pilot, lambda: any(v.is_open for v in screen.transcript.query(QuestionView)), WAIT)
    view = next(v for v in screen.transcript.query(QuestionView) if v.is_open)
    await until(pilot, lambda: not view.is_guarded and view.first_control() is not None, WAIT)
    return view


async def ask(pilot: Pilot[None], screen: ChatScreen, kind: str) -> QuestionView:
    """Send the test message that asks a question of `kind`; its view, ready for an answer."""
    await say(pilot, screen, f"minara-test:question {kind}", wait=False)
    return await open_question(pilot, screen)


async def session_done(http: httpx.AsyncClient, session_id: str, messages: int) -> dict[str, Any]:
    """The session's detail once it holds `messages` rows and no turn runs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while True:
        detail = (await http.get(f"/v1/sessions/{session_id}")).raise_for_status().json()
        if not detail["is_streaming"] and len(detail["messages"]) >= messages:
            return dict(detail)
        if loop.time() > deadline:
            raise AssertionError(f"session {session_id} did not finish: {detail}")
        await asyncio.sleep(0.05)
