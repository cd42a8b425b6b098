"""The seam is real: a backend written here, speaking no protocol, drives the real chat screen.

It builds its answers with the conversation's own methods (as a protocol's reducer does) and
answers decisions itself; the real `TalkieApp` shows a whole turn with text, a tool, a card and
an action, and the person's decision reaches the backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talkie_tui.backends.base import Account, Capabilities, ServerInfo
from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import CardPart
from talkie_tui.config import KnownServers, Settings
from talkie_tui.protocol.talkie.models import Action, Card, DecisionResult, User
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.action_card import ActionCard
from tests.ui.flows import screen_text, until

CARD = Card.model_validate(
    {
        "title": "Alfa s.r.o.",
        "fallbackText": "Alfa s.r.o.",
        "blocks": [{"type": "text", "text": "Praha"}],
    }
)
ACTION = Action.model_validate(
    {
        "id": "a_1",
        "summary": "Call Petr Novák",
        "riskLevel": "low",
        "status": "pending",
        "paramsHash": "sha256:1",
    }
)

SEAM = ServerInfo(
    "seam", "https://seam.invalid", "talkie", "Seam server", capabilities=Capabilities(actions=True)
)


@dataclass
class Step:
    """One step of an answer, in the UI's terms."""

    change: Change
    delta: str | None = None
    proposes_action: bool = False
    lost: bool = False
    recovered: None = None


@dataclass
class Message:
    """The person's message; `settled` once its answer ended."""

    text: str
    message_id: str
    settled: bool = False


class SeamSession:
    """A thread whose every answer is the same scripted turn."""

    def __init__(self) -> None:
        self.conversation = Conversation()
        self.waiting = False

    @property
    def thread_id(self) -> str | None:
        return self.conversation.thread_id

    def stop_waiting(self) -> bool:
        return False

    async def load(self, thread_id: str) -> Conversation:
        return self.conversation

    def prepare(self, text: str) -> Message:
        return Message(text, f"m_{len(self.conversation.turns)}")

    def again(self, text: str, message_id: str) -> Message:
        return Message(text, message_id)

    async def send(self, outgoing: Message) -> AsyncIterator[Step]:
        talk = self.conversation
        talk.thread_id = talk.thread_id or "t_seam"
        talk.add_user_message(outgoing.message_id, outgoing.text)
        yield Step(talk.begin_answer("r_1"))
        yield Step(talk.start_tool("c_1", "find_company", "Looking up Alfa…"))
        yield Step(talk.end_tool("c_1", failed=False))
        for words in ("Alfa is in ", "**Praha**."):
            yield Step(talk.add_text("m_answer", words), delta=words)
        yield Step(talk.add_part(CardPart(CARD)))
        yield Step(talk.propose(ACTION), proposes_action=True)
        yield Step(talk.end_answer("done"))
        outgoing.settled = True


@dataclass
class SeamBackend:
    """The least a server must offer the chat screen; it records the decisions it gets."""

    decisions: list[tuple[str, str, str]] = field(default_factory=list)
    info: ServerInfo = field(default_factory=lambda: SEAM)

    def new_session(self, thread_id: str | None = None) -> SeamSession:
        return SeamSession()

    async def account(self) -> Account:
        return Account(User(name="Seam Tester"))

    async def threads(self) -> list[Any]:
        return []

    async def action(self, action_id: str) -> Action:
        return ACTION

    async def decide(self, action: Action, decision: str, method: str) -> DecisionResult:
        self.decisions.append((action.id, decision, method))
        return DecisionResult(action=action.model_copy(update={"status": "done"}))

    async def logo(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def test_a_backend_of_the_test_suite_drives_a_whole_turn(tmp_path: Path) -> None:
    backend = SeamBackend()
    settings = Settings(downloads_dir=tmp_path / "downloads")
    app = TalkieApp(settings=settings, known=KnownServers.load(), backend=backend)  # type: ignore[arg-type]
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await until(pilot, lambda: screen.header.state == "connected")
        screen.composer.insert("Where is Alfa?")
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.transcript.query(ActionCard)))
        await until(pilot, lambda: not screen.answering)
        text = screen_text(app)
        for shown in (
            "Where is Alfa?",
            "Looking up Alfa",
            "Alfa is in Praha.",
            "Alfa s.r.o.",
            "Call Petr Novák",
            "Seam Tester",
        ):
            assert shown in text, shown
        assert screen.header.pending_actions == 1
        card = screen.transcript.query_one(ActionCard)
        await until(pilot, lambda: not card.is_guarded)
        card.focus()
        await pilot.press("y")
        await until(pilot, lambda: backend.decisions == [("a_1", "confirm", "button")])
        await until(pilot, lambda: card.action.status == "done")
        assert screen.header.pending_actions == 0
