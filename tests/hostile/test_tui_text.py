"""The TUI against a server whose every string carries control sequences and markup.

Rule (DESIGN "Rules that hold everywhere"): server text is data. No control character of it
reaches the terminal, Rich/Textual markup in it shows as characters and never runs (a
`[@click=app.quit]` stays text), and nothing the user typed is lost when the server refuses.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from textual.widgets import Button

from talkie_tui.backends.talkie.session import TalkieSession
from talkie_tui.chat.turns import NoticePart
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.action_card import ActionCard
from talkie_tui.ui.widgets.card import CardView
from talkie_tui.ui.widgets.markdown_view import MarkdownView
from talkie_tui.ui.widgets.notice import NoticeView
from tests.hostile.kit import (
    HOSTILE_RUN,
    answer,
    assert_terminal_safe,
    controls,
    frames,
    hostile,
    hostile_app,
    says,
    shown,
)
from tests.protocol.conftest import Connect, Serve
from tests.stub_server import ENDPOINTS, envelope, sse_response
from tests.ui.flows import chat_screen, make_app, until

pytestmark = pytest.mark.hostile

ERROR_RUN = frames(
    [
        {"type": "RUN_STARTED", "threadId": "t_h", "runId": "r_2"},
        *says("partial", "m_2"),
        {
            "type": "RUN_ERROR",
            "message": hostile("runerror"),
            "code": "upstream_unavailable\x1b[2J",
            "metadata": {"retryable": True},
        },
    ]
)

# A known event the client cannot read, whose validation error quotes the server's own value.
MALFORMED_RUN = frames(
    answer(
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "x", "role": hostile("role")}]},
        *says("after", "m_3"),
    )
)


async def reply(request: Request) -> Response:
    """The run: chosen by the first word of the user's message."""
    text = json.loads(await request.body())["messages"][0]["content"]
    if text.startswith("refuse"):
        return JSONResponse(envelope("forbidden\x1b[2J", hostile("refused")), status_code=403)
    body = ERROR_RUN if text.startswith("error") else HOSTILE_RUN
    return sse_response(body)


async def status(request: Request) -> Response:
    """GET status: who is signed in and usage, all hostile."""
    user = {"id": "u\x1b[2J", "name": hostile("user"), "email": "e\x9b@x"}
    usage = [{"label": hostile("meter"), "used": 1, "limit": 10, "unit": "t\x1b[2J"}]
    return JSONResponse({"user": user, "chat": True, "usage": usage})


async def threads(request: Request) -> Response:
    """GET threads: one thread with a hostile title."""
    rows = [{"id": "t_1\x1b[2J", "title": hostile("thread"), "channel": "chat\x9b"}]
    return JSONResponse({"threads": rows})


HOSTILE_REST = [Route(ENDPOINTS["status"], status), Route(ENDPOINTS["threads"], threads)]


def notifications(app: TalkieApp) -> str:
    """Every notification's text so far."""
    return "\n".join(str(n.message) for n in app._notifications)


async def ask(app: TalkieApp, screen: ChatScreen, pilot, text: str) -> None:  # type: ignore[no-untyped-def]
    """Type `text`, press Enter, wait for the answer to end."""
    screen.composer.focus()
    screen.composer.insert(text)
    await pilot.press("enter")
    await until(pilot, lambda: not screen.answering and screen.composer.text == "")
    await pilot.pause()


async def test_every_string_of_an_answer_reaches_the_screen_inert(
    serve: Serve, tmp_path: Path
) -> None:
    """DESIGN: every server string (answer, user, usage, threads) shows literal and clean."""
    server = serve(hostile_app(reply, routes=HOSTILE_REST))
    app = make_app(server.origin, tmp_path)
    quit_called: list[bool] = []
    app.action_quit = lambda: quit_called.append(True)  # type: ignore[method-assign]
    async with app.run_test(size=(160, 120), notifications=True) as pilot:
        screen = await chat_screen(app, pilot)
        await ask(app, screen, pilot, "hello")
        await until(pilot, lambda: bool(screen.transcript.query(CardView)))
        await pilot.pause(0.1)
        text = assert_terminal_safe(app)
        for tag in ("text", "toollabel", "toolerror", "title", "heading", "badge", "summary"):
            assert shown(tag) in text, tag
        assert shown("thread")[:22] in text  # the thread list cuts long titles
        assert screen.transcript.query_one(ActionCard).action.summary == shown("summary")
        assert shown("user") in screen.header.user_label
        # Clicking where the markup is shown must not run it.
        await pilot.click(MarkdownView)
        await pilot.pause()
        assert app.is_running and quit_called == []
        assert controls(notifications(app)) == []


async def test_a_run_error_and_a_refusal_show_clean_words_and_keep_the_message(
    serve: Serve, tmp_path: Path
) -> None:
    """§5 RUN_ERROR and §3 errors: the server's words, cleaned; the message stays with Retry."""
    server = serve(hostile_app(reply))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(140, 60), notifications=True) as pilot:
        screen = await chat_screen(app, pilot)
        await ask(app, screen, pilot, "error please")
        await until(pilot, lambda: bool(screen.transcript.query(NoticeView)))
        await ask(app, screen, pilot, "refuse this, typed with care")
        await until(pilot, lambda: len(screen.transcript.query(NoticeView)) == 2)
        await pilot.pause(0.1)
        text = assert_terminal_safe(app)
        assert shown("runerror") in text and shown("refused") in text
        user = screen.session.conversation.turns[-1]
        assert (user.role, user.text, user.state) == (
            "user",
            "refuse this, typed with care",
            "failed",
        )
        last = screen.transcript.query(NoticeView).last()
        assert last.query(Button), "the refused message can be retried"
        assert controls(notifications(app)) == []
        assert shown("refused") in notifications(app)


async def test_an_unreadable_event_is_reported_without_the_servers_control_bytes(
    serve: Serve, connect: Connect
) -> None:
    """§5: an unreadable known event becomes a warning notice; the text it quotes is clean."""
    server = serve(hostile_app(MALFORMED_RUN))
    session = TalkieSession(await connect(server.origin))
    async for _ in session.send(session.prepare("malformed")):
        pass
    answer_turn = session.conversation.turns[-1]
    assert answer_turn.text == "after"  # the stream went on
    notices = [part.text for part in answer_turn.parts if isinstance(part, NoticePart)]
    assert len(notices) == 1 and "MESSAGES_SNAPSHOT" in notices[0]
    assert controls(notices[0]) == []
