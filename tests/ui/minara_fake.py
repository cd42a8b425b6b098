"""A small Minara-like backend for the UI tests, until the real Minara backend lands.

Its conversation is the real `MinaraConversation`, fed `{type, data}` events through `apply`
exactly as the wire client will feed it. A message's answer plays the events scripted for its
text, then whatever the test pushes (`FakeMinaraBackend.push`) until a `done` or `error`. It
answers questions (`Answers`) as the reference gateway does: the answers are recorded, and the
question is then resolved on the stream with a text and `done`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from talkie_tui.backends.base import Account, AnswerOutcome, Capabilities, ServerInfo
from talkie_tui.backends.minara.reducer import MinaraConversation
from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import AttachmentPart, QuestionPart, TextPart
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.talkie.models import User
from talkie_tui.ui.app import TalkieApp

ORIGIN = "https://minara.invalid"
INFO = ServerInfo(
    "minara-fake",
    ORIGIN,
    "minara",
    "Minara Test Gateway",
    sign_in="token",
    capabilities=Capabilities(questions=True, stop=True),
)
Event = dict[str, Any]


def event(kind: str, **data: Any) -> Event:
    """One `{type, data}` event of the Minara stream."""
    return {"type": kind, "data": data}


@dataclass
class Step:
    """One step of an answer, in the UI's terms (`backends.base.Update`)."""

    change: Change
    delta: str | None = None
    lost: bool = False
    recovered: None = None
    proposes_action: bool = False
    broken: None = None
    wire: str | None = None


@dataclass
class Message:
    """The person's message; `settled` once its answer ended."""

    text: str
    message_id: str
    settled: bool = False
    thread_id: str | None = "sess_fake"
    run_id: str | None = None
    finished: bool = False
    failure: None = None


class FakeSession:
    """One session whose answers are scripted events, then pushed ones."""

    def __init__(self, backend: FakeMinaraBackend) -> None:
        self._backend = backend
        self.conversation: Conversation = MinaraConversation()
        self.waiting = False
        self.events: asyncio.Queue[Event] = asyncio.Queue()

    @property
    def thread_id(self) -> str | None:
        return self.conversation.thread_id

    def stop_waiting(self) -> bool:
        return False

    async def load(self, thread_id: str) -> Conversation:
        return self.conversation

    def prepare(self, text: str, **extras: Any) -> Message:
        return Message(text, f"m_{len(self.conversation.turns)}")

    def again(self, text: str, message_id: str) -> Message:
        return Message(text, message_id)

    async def send(self, outgoing: Message) -> AsyncIterator[Step]:
        talk = self.conversation
        assert isinstance(talk, MinaraConversation)
        attachments = self._backend.attachments.pop(outgoing.text, [])
        talk.add_user_message(outgoing.message_id, outgoing.text, attachments=attachments)
        yield Step(talk.turns[-1])
        for scripted in self._backend.scripts.get(outgoing.text, []):
            self.events.put_nowait(scripted)
        self._backend.live = self
        try:
            while True:
                item = await self.events.get()
                last = talk.turns[-1]
                before = last.parts[-1] if last.role == "assistant" and last.parts else None
                change = talk.apply(item)
                delta = None
                if item["type"] == "text_delta" and isinstance(change, TextPart):
                    delta = item["data"]["text"] if change is before else None
                yield Step(change, delta=delta)
                if item["type"] in ("done", "error"):
                    break
        finally:
            self._backend.live = None
            outgoing.settled = True


@dataclass
class FakeMinaraBackend:
    """The least the chat screen needs, plus `Answers`, recording what reaches it."""

    info: ServerInfo = field(default_factory=lambda: INFO)
    scripts: dict[str, list[Event]] = field(default_factory=dict)
    attachments: dict[str, list[AttachmentPart]] = field(default_factory=dict)
    answers: list[tuple[str, list[list[str]]]] = field(default_factory=list)
    secrets: list[tuple[str, str | None]] = field(default_factory=list)
    outcome: AnswerOutcome = "answered"
    failure: TalkieError | None = None
    resolve_on_answer: bool = True
    live: FakeSession | None = None
    sessions: list[FakeSession] = field(default_factory=list)

    def new_session(self, thread_id: str | None = None) -> FakeSession:
        session = FakeSession(self)
        self.sessions.append(session)
        return session

    def push(self, *events: Event) -> None:
        """Events the server sends now, into the answer being written."""
        assert self.live is not None, "no answer is being written"
        for item in events:
            self.live.events.put_nowait(item)

    async def account(self) -> Account:
        return Account(User(name="Minara Tester"))

    async def threads(self) -> list[Any]:
        return []

    async def delete_thread(self, thread_id: str) -> None:
        return None

    async def stop(self, run_id: str) -> None:
        return None

    async def logo(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def is_same_origin(self, url: str) -> bool:
        return url.startswith(ORIGIN) or url.startswith("/")

    def resolve_url(self, url: str) -> str:
        return ORIGIN + url if url.startswith("/") else url

    @asynccontextmanager
    async def download(self, url: str) -> AsyncIterator[Any]:
        raise AssertionError("no downloads in these tests")
        yield

    # --- Answers ---------------------------------------------------------------------------

    async def answer(self, question: QuestionPart, answers: list[list[str]]) -> AnswerOutcome:
        self.answers.append((question.question_id, answers))
        return self._settle(question, ", ".join(label for answer in answers for label in answer))

    async def provide_secret(self, question: QuestionPart, value: str | None) -> AnswerOutcome:
        self.secrets.append((question.question_id, value))
        return self._settle(question, "provided" if value is not None else "declined")

    async def tap(self, session: Any, message_id: str, button_id: str) -> None:
        return None

    def _settle(self, question: QuestionPart, said: str) -> AnswerOutcome:
        if self.failure is not None:
            raise self.failure
        if self.outcome == "answered" and self.resolve_on_answer and self.live is not None:
            self.push(
                event("pending_question_resolved", id=question.question_id, outcome="answered"),
                event("text_delta", text=f"Answer: {said}"),
                event("done"),
            )
        return self.outcome


def minara_app(backend: FakeMinaraBackend, tmp_path: Any) -> TalkieApp:
    """The real app on the fake backend, with settings in the test's folder."""
    settings = Settings(downloads_dir=tmp_path / "downloads")
    return TalkieApp(settings=settings, known=KnownServers.load(), backend=backend)


# --- sample answers ----------------------------------------------------------------------------

TABLE = {
    "kind": "table",
    "columns": ["Asset", "Price", "24h change", "Note"],
    "rows": [
        ["BTC", 68900.5, "+2.4 %", "Largest by market value, traded on every exchange"],
        ["ETH", 3421, "-0.8 %", "Smart contracts"],
        ["SOL", 171.25, "+5.1 %", ""],
        ["[bold]DOGE[/bold]", 0.162, "+12.0 %", "Markup \x1b[31mstays\x1b[0m literal"],
    ],
}
KV = {
    "kind": "kv",
    "items": [
        {"label": "Account", "value": "Salary"},
        {"label": "Balance", "value": "12,480.00 USD"},
        {"label": "Last transfer", "value": "2026-07-01 to Savings, standing order"},
    ],
}
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
CHART_ONE = {
    "kind": "chart",
    "title": "BTC price this week",
    "series": [
        {
            "label": "BTC",
            "points": [
                [d, y]
                for d, y in zip(DAYS, [61200, 63400, 62100, 65800, 68900, 67300], strict=True)
            ],
        }
    ],
}
CHART_TWO = {
    "kind": "chart",
    "title": "Prices this week",
    "series": [
        {
            "label": "BTC",
            "points": [
                [d, y]
                for d, y in zip(DAYS, [61200, 63400, 62100, 65800, 68900, 67300], strict=True)
            ],
        },
        {
            "label": "ETH",
            "points": [
                [d, y] for d, y in zip(DAYS, [3300, 3250, 3380, 3420, 3390, 3510], strict=True)
            ],
        },
    ],
}


def answer_with(*blocks: dict[str, Any], text: str = "Here you are.") -> list[Event]:
    """An answer: a text, then each block, then done."""
    events = [
        event("start", session_id="sess_fake", turn_id="turn_1"),
        event("text_delta", text=text),
    ]
    events += [event("ui_block", id=f"b{i}", block=block) for i, block in enumerate(blocks)]
    return [*events, event("done")]


def question(kind: str, question_id: str = "q_1", **extra: Any) -> Event:
    """A `pending_question_added` of `kind` as the reference gateway asks it."""
    questions: list[dict[str, Any]]
    if kind in ("select", "multi"):
        questions = [
            {
                "text": "Which account?",
                "options": [
                    {"label": "Salary", "description": "Where your pay arrives"},
                    {"label": "Savings"},
                    {"label": "Travel", "description": "The card for trips"},
                ],
                "multi": kind == "multi",
            }
        ]
        kind = "select"
    elif kind == "confirm":
        questions = [
            {
                "text": "Swap 0.5 ETH for USDC at 3,421 USD?",
                "options": [{"label": "Confirm"}, {"label": "Cancel"}],
            }
        ]
    elif kind == "input":
        questions = [{"text": "What should the transfer say?", "placeholder": "A note"}]
    else:
        questions = [{"text": "Paste your exchange API key", "placeholder": "API key"}]
        extra.setdefault("writeEndpoint", "/v1/credentials/exchange_api_key")
    data = {
        "id": question_id,
        "kind": kind,
        "asked_by": {"agent": "planner", "tool": "swap"},
        "questions": questions,
        **extra,
    }
    return {"type": "pending_question_added", "data": data}


def asking(kind: str, **extra: Any) -> list[Event]:
    """An answer that asks a question and waits (the test or an answer resolves it)."""
    return [
        event("start", session_id="sess_fake", turn_id="turn_q"),
        event("text_delta", text="Asking."),
        question(kind, **extra),
    ]
