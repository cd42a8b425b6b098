"""Issue 20, "History equals live": what a turn looked like while it streamed (the order of its
text, tool lines, cards, actions, questions, buttons and files) is what the same thread shows
when it is opened again, on each protocol's reference server (its test mode and demo agent).

Each case sends its messages in the real app, takes the rendering of every turn part by part,
then opens the thread in a new app and compares.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from talkie_tui.chat.conversation import Conversation
from talkie_tui.chat.turns import (
    ActionPart,
    AttachmentPart,
    ButtonsPart,
    CardPart,
    NoticePart,
    Part,
    QuestionPart,
    QuickRepliesPart,
    TextPart,
    TodoPart,
    ToolPart,
    UiBlockPart,
)
from talkie_tui.commands.demo_cuckoo import cuckoo_demo
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from tests.helpers import TEST_TOKEN
from tests.ui.flows import put_and_send, until

pytestmark = pytest.mark.slow

SIZE = (120, 40)
WAIT = 60.0


@dataclass
class Case:
    """A reference server, how talkie signs in to it, and the messages of one thread."""

    url: str
    options: dict[str, Any]
    messages: list[str]


@pytest.fixture(params=["talkie", "minara", "cuckoo"])
def case(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    devserver: Callable[..., str],
    minara_gateway: Callable[..., str],
) -> Iterator[Case]:
    if request.param == "cuckoo":
        with cuckoo_demo(tmp_path / "demo") as demo:
            options = {"hub_token": demo.session_token, "protocol": "cuckoo"}
            messages = [
                "talkie-test:card",
                "talkie-test:error",
                "talkie-test:echo plain words",
                "meetings today",
            ]
            yield Case(demo.hub_url, options, messages)
    elif request.param == "minara":
        url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN, demo_agent=True)
        messages = [
            "minara-test:tools",
            "minara-test:blocks",
            "minara-test:todos",
            "minara-test:error",
            "How is my portfolio?",
        ]
        yield Case(url, {"gateway_token": TEST_TOKEN, "protocol": "minara"}, messages)
    else:
        url = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_agent=True, demo_delay=0.0)
        messages = [
            "talkie-test:card",
            "talkie-test:error",
            "What meetings do I have today?",
            "talkie-test:action",
        ]
        yield Case(url, {"token": TEST_TOKEN}, messages)


def describe(part: Part) -> str:
    """One part as the person sees it, in words."""
    if isinstance(part, TextPart):
        return f"text: {part.text.strip()}"
    if isinstance(part, ToolPart):
        return f"tool: {part.label} ({part.state})"
    if isinstance(part, CardPart):
        return f"card: {part.card.title}"
    if isinstance(part, ActionPart):
        return f"action: {part.action.summary} ({part.action.status})"
    if isinstance(part, NoticePart):
        return f"notice: {part.text}"
    if isinstance(part, QuestionPart):
        return f"question: {[q.text for q in part.questions]} ({part.outcome})"
    if isinstance(part, ButtonsPart):
        return f"buttons: {[[b.label for b in row] for row in part.rows]}"
    if isinstance(part, QuickRepliesPart):
        return f"quick replies: {part.labels}"
    if isinstance(part, AttachmentPart):
        return f"file: {part.filename} ({part.kind})"
    if isinstance(part, TodoPart):
        return f"todos: {part.items}"
    if isinstance(part, UiBlockPart):
        return f"block: {part.kind}"
    return type(part).__name__


def rendering(conversation: Conversation) -> list[tuple[str, list[str]]]:
    """Each turn: who, and its parts in order, as `describe` words them."""
    return [(turn.role, [describe(p) for p in turn.parts]) for turn in conversation.turns]


def app_on(case: Case, tmp_path: Path, **options: Any) -> TalkieApp:
    settings = Settings(downloads_dir=tmp_path / "downloads", token_storage="file")
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(case.url, settings=settings, known=known, **case.options, **options)


async def chat(app: TalkieApp, pilot: Pilot[None]) -> ChatScreen:
    await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted, WAIT)
    screen = app.screen
    assert isinstance(screen, ChatScreen)
    await until(pilot, lambda: screen.header.state == "connected", WAIT)
    return screen


def settled(screen: ChatScreen, answers: int) -> bool:
    turns = screen.session.conversation.turns
    replies = [t for t in turns if t.role == "assistant"]
    return (
        len(replies) >= answers
        and not screen.answering
        and all(t.state != "streaming" for t in turns)
    )


async def test_a_thread_opened_again_shows_what_was_shown_live(case: Case, tmp_path: Path) -> None:
    live = app_on(case, tmp_path)
    async with live.run_test(size=SIZE) as pilot:
        screen = await chat(live, pilot)
        for number, message in enumerate(case.messages, start=1):
            screen.composer.focus()
            await put_and_send(pilot, screen, message)
            await until(pilot, lambda n=number: settled(screen, n), WAIT)
            await pilot.pause(0.5)  # anything the answer still brings (a hub's late frames)
        shown_live = rendering(screen.session.conversation)
        thread_id = screen.session.thread_id
    assert thread_id is not None
    again = app_on(case, tmp_path, thread_id=thread_id)
    async with again.run_test(size=SIZE) as pilot:
        screen = await chat(again, pilot)
        await until(pilot, lambda: len(screen.session.conversation.turns) >= 2, WAIT)
        await pilot.pause(0.5)
        shown_again = rendering(screen.session.conversation)
    assert shown_again == shown_live


async def test_a_failed_talkie_answer_opened_again_keeps_its_words_and_retry(
    devserver: Callable[..., str], tmp_path: Path
) -> None:
    """A run that failed is in the thread when it is opened again: the server's words and
    Retry, as live; Retry there has the server answer again, in the failed answer's place."""
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_delay=0.0)
    case = Case(url, {"token": TEST_TOKEN}, ["talkie-test:error"])
    live = app_on(case, tmp_path)
    async with live.run_test(size=SIZE) as pilot:
        screen = await chat(live, pilot)
        await pilot.press(*case.messages[0], "enter")
        await until(pilot, lambda: settled(screen, 1), WAIT)
        shown_live = rendering(screen.session.conversation)
        thread_id = screen.session.thread_id
    assert shown_live == [
        ("user", ["text: talkie-test:error"]),
        ("assistant", ["notice: The model provider is unavailable (test mode)."]),
    ]
    again = app_on(case, tmp_path, thread_id=thread_id)
    async with again.run_test(size=SIZE) as pilot:
        screen = await chat(again, pilot)
        await until(pilot, lambda: len(screen.session.conversation.turns) >= 2, WAIT)
        assert rendering(screen.session.conversation) == shown_live
        turns = screen.session.conversation.turns
        [notice] = [p for t in turns for p in t.parts if isinstance(p, NoticePart)]
        assert notice.retryable
        runs_before = screen.session.conversation.turns[-1].id
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.session.conversation.turns[-1].id != runs_before, WAIT)
        await until(pilot, lambda: settled(screen, 1), WAIT)
        assert rendering(screen.session.conversation) == shown_live  # one failed answer, anew
    third = app_on(case, tmp_path, thread_id=thread_id)
    async with third.run_test(size=SIZE) as pilot:
        screen = await chat(third, pilot)
        await until(pilot, lambda: len(screen.session.conversation.turns) >= 2, WAIT)
        assert rendering(screen.session.conversation) == shown_live
