"""A small Cuckoo-like backend for the UI tests: buttons, quick replies, replies, activity,
devices and the e-mail sign-in, without a hub.

Its conversation is the real `CuckooConversation`, fed the hub's client-socket frames
(`{type, data}`) through `apply_frame` exactly as the socket feeds it. A message's answer plays
the frames scripted for its text; a script ending in `HOLD` then waits for the frames the test
pushes (`FakeCuckooBackend.push`) until `END`. A tap goes as the real session sends it: prepared
by `prepare_tap`, sent like a message whose body carries the action, which the reducer turns
into the button taken. With `taps_by_session=False` the session has no `prepare_tap`, and taps
reach `FakeCuckooBackend.tap` (`Answers`) instead.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from talkie_tui.backends.base import (
    Account,
    AnswerOutcome,
    Capabilities,
    ServerInfo,
    SignedInDevice,
    StorageUse,
)
from talkie_tui.backends.cuckoo.reducer import CuckooConversation
from talkie_tui.chat.conversation import Change
from talkie_tui.chat.turns import ButtonsPart, QuestionPart, TextPart
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.cuckoo.models import Message as HubMessage
from talkie_tui.protocol.talkie.models import User
from talkie_tui.ui.app import TalkieApp

ORIGIN = "https://hub.invalid"
CONVERSATION = "cnv_fake"
AGENT = "agt_fake"
PERSON = "usr_fake"
INFO = ServerInfo(
    "cuckoo-fake",
    ORIGIN,
    "cuckoo",
    "Cuckoo Test Hub",
    sign_in="email_code",
    capabilities=Capabilities(buttons=True, devices=True, live=True, stop=True),
)
Frame = dict[str, Any]
HOLD: Frame = {"type": "_hold"}
END: Frame = {"type": "_end"}

_ids = itertools.count(1)


def next_id() -> str:
    """A message id that sorts after every earlier one (the hub's ids grow with time)."""
    return f"msg_{next(_ids):08d}"


def auto_id(name: str = "") -> str:
    """A scripted message's id, made when the frame is played (so it sorts after the person's
    message it answers); the same name is the same message within a session."""
    return f"auto:{name or next(_ids)}"


def hub_message(
    message_id: str,
    text: str = "",
    *,
    sender: str = "agent",
    buttons: list[list[dict[str, Any]]] | None = None,
    quick_replies: list[str] | None = None,
    reply_to: dict[str, Any] | None = None,
    status: str = "complete",
    stopped: bool = False,
    truncated: bool = False,
    action: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A message in the hub's client form."""
    body: dict[str, Any] = {"text": text}
    if buttons:
        body["buttons"] = buttons
    if quick_replies:
        body["quick_replies"] = [{"label": label} for label in quick_replies]
    if action:
        body["action"] = action
    return {
        "id": message_id,
        "conversation_id": CONVERSATION,
        "sender": {"kind": sender, "id": AGENT if sender == "agent" else PERSON},
        "body": body,
        "reply_to": reply_to,
        "status": status,
        "truncated": truncated,
        "stopped": stopped,
        "created_at": "2026-07-01T12:00:00Z",
    }


def created(message: dict[str, Any], kind: str = "message.created") -> Frame:
    """A whole-message push."""
    return {"type": kind, "data": {"conversation_id": CONVERSATION, "message": message}}


def delta(message_id: str, text: str) -> Frame:
    """A `message.delta` push."""
    return {
        "type": "message.delta",
        "data": {"conversation_id": CONVERSATION, "message_id": message_id, "text": text},
    }


def activity(state: str, label: str | None = None, *, seconds: float = 10.0) -> Frame:
    """An `activity` push, lasting `seconds` from now."""
    until = (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()
    data = {"conversation_id": CONVERSATION, "agent_id": AGENT, "state": state, "expires_at": until}
    if label is not None:
        data["label"] = label
    return {"type": "activity", "data": data}


def agent_status(status: str) -> Frame:
    """An `agent.status` push."""
    return {"type": "agent.status", "data": {"agent_id": AGENT, "status": status}}


def reply(text: str, **kwargs: Any) -> list[Frame]:
    """An agent's whole reply."""
    return [created(hub_message(auto_id(), text, **kwargs))]


BOOKING_BUTTONS = [
    [
        {"id": "confirm", "label": "Book it", "style": "primary"},
        {"id": "later", "label": "Not now", "style": "default"},
    ],
    [{"id": "cancel", "label": "Cancel the trip", "style": "danger"}],
    [
        {"url": "https://example.com/trip/42", "label": "Details"},
        {"url": "tel:+420123456789", "label": "Call the desk"},
    ],
]


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
class Outgoing:
    """The person's message (or tap); `settled` once its answer ended."""

    text: str
    message_id: str
    tap: tuple[str, str] | None = None
    settled: bool = False
    thread_id: str | None = CONVERSATION
    run_id: str | None = None
    finished: bool = False
    failure: None = None


class FakeSession:
    """One conversation whose answers are scripted frames, then pushed ones."""

    def __init__(self, backend: FakeCuckooBackend) -> None:
        self._backend = backend
        self.conversation = CuckooConversation(CONVERSATION)
        self.waiting = False
        self.frames: asyncio.Queue[Frame] = asyncio.Queue()
        self.outside: asyncio.Queue[Frame] = asyncio.Queue()  # pushed between answers
        self.following = 0  # how many times `follow` was started
        self._auto: dict[str, str] = {}
        if backend.taps_by_session:
            self.prepare_tap = self._prepare_tap

    @property
    def thread_id(self) -> str | None:
        return self.conversation.thread_id

    def stop_waiting(self) -> bool:
        return False

    async def load(self, thread_id: str) -> CuckooConversation:
        return self.conversation

    def prepare(self, text: str, **extras: Any) -> Outgoing:
        return Outgoing(text, next_id())

    def again(self, text: str, message_id: str, **extras: Any) -> Outgoing:
        return Outgoing(text, message_id)

    def _prepare_tap(self, message_id: str, button_id: str) -> Outgoing:
        return Outgoing(button_id, next_id(), tap=(message_id, button_id))

    def _real_id(self, message_id: str) -> str:
        if not message_id.startswith("auto:"):
            return message_id
        return self._auto.setdefault(message_id, next_id())

    def fold(self, frame: Frame) -> Step:
        """Fold one frame in, as the socket would (scripted ids made now)."""
        data = dict(frame["data"])
        if "message" in data:
            data["message"] = dict(data["message"], id=self._real_id(data["message"]["id"]))
        if "message_id" in data:
            data["message_id"] = self._real_id(data["message_id"])
        frame = {"type": frame["type"], "data": data}
        talk = self.conversation
        change = talk.apply_frame(frame)
        said = frame["data"].get("text") if frame["type"] == "message.delta" else None
        return Step(change, delta=said if isinstance(change, TextPart) else None)

    def person_says(self, outgoing: Outgoing) -> Change:
        """The person's message (or tap) as the hub stores it."""
        action = None
        text = outgoing.text
        if outgoing.tap is not None:
            source, button_id = outgoing.tap
            action = {"button_id": button_id, "source_message_id": source}
            text = _label(self.conversation, source, button_id)
        return self.conversation.apply_message(
            HubMessage.model_validate(
                hub_message(outgoing.message_id, text, sender="user", action=action)
            )
        )

    async def follow(self) -> AsyncIterator[Step]:
        """The conversation live between answers: the frames pushed with `push_outside`."""
        self.following += 1
        while (pushed := await self.outside.get()) is not END:
            yield self.fold(pushed)

    async def send(self, outgoing: Outgoing) -> AsyncIterator[Step]:
        backend = self._backend
        key = outgoing.text
        if outgoing.tap is not None:
            backend.taps.append(outgoing.tap)
            if backend.tap_failure is not None:
                raise backend.tap_failure
            key = f"tap:{outgoing.tap[1]}"
        else:
            backend.sent.append(outgoing.text)
        yield Step(self.person_says(outgoing))
        script = backend.scripts.get(key, [])
        backend.live = self
        try:
            for frame in script:
                if frame is HOLD:
                    while (pushed := await self.frames.get()) is not END:
                        yield self.fold(pushed)
                    break
                yield self.fold(frame)
                await asyncio.sleep(0)
        finally:
            backend.live = None
            outgoing.settled = True


def _label(conversation: CuckooConversation, message_id: str, button_id: str) -> str:
    turn = conversation.turn(message_id)
    for part in turn.parts if turn is not None else ():
        if isinstance(part, ButtonsPart):
            for row in part.rows:
                for button in row:
                    if button.button_id == button_id:
                        return button.label
    return button_id


def sample_devices(now: datetime | None = None) -> list[SignedInDevice]:
    """Three devices of a person, this one used just now."""
    now = now or datetime.now(UTC)
    return [
        SignedInDevice("ses_phone", "Pixel 8", now - timedelta(hours=3)),
        SignedInDevice("ses_here", "talkie on laptop", now - timedelta(seconds=5), True),
        SignedInDevice("ses_tablet", "iPad", now - timedelta(days=5, hours=2)),
    ]


SAMPLE_STORAGE = StorageUse(
    used_bytes=12_400_000,
    budget_bytes=100_000_000,
    kept_days=90,
    kept_since=datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
)


@dataclass
class FakeCuckooBackend:
    """The least the chat screen needs, plus `Answers` and `Devices`, recording what reaches
    it."""

    info: ServerInfo = field(default_factory=lambda: INFO)
    scripts: dict[str, list[Frame]] = field(default_factory=dict)
    sent: list[str] = field(default_factory=list)
    taps: list[tuple[str, str]] = field(default_factory=list)
    tap_failure: TalkieError | None = None
    taps_by_session: bool = True
    live: FakeSession | None = None
    sessions: list[FakeSession] = field(default_factory=list)
    device_list: list[Any] = field(default_factory=sample_devices)
    storage_use: Any = SAMPLE_STORAGE
    ended: list[str | None] = field(default_factory=list)
    device_failure: TalkieError | None = None

    def new_session(self, thread_id: str | None = None) -> FakeSession:
        session = FakeSession(self)
        self.sessions.append(session)
        return session

    def push(self, *frames: Frame) -> None:
        """Frames the hub pushes now, into the answer being followed."""
        assert self.live is not None, "no answer is being followed"
        for frame in frames:
            self.live.frames.put_nowait(frame)

    def push_outside(self, *frames: Frame) -> None:
        """Frames the hub pushes between answers (followed by the session's `follow`)."""
        for frame in frames:
            self.sessions[-1].outside.put_nowait(frame)

    async def account(self) -> Account:
        return Account(User(name="Hub Tester"))

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
        raise AssertionError("a hub asks no questions")

    async def provide_secret(self, question: QuestionPart, value: str | None) -> AnswerOutcome:
        raise AssertionError("a hub asks no secrets")

    async def tap(self, session: FakeSession, message_id: str, button_id: str) -> None:
        self.taps.append((message_id, button_id))
        if self.tap_failure is not None:
            raise self.tap_failure
        session.person_says(Outgoing(button_id, next_id(), tap=(message_id, button_id)))

    # --- Devices ---------------------------------------------------------------------------

    async def devices(self) -> list[Any]:
        if self.device_failure is not None:
            raise self.device_failure
        return list(self.device_list)

    async def storage(self) -> Any:
        return self.storage_use

    async def end_device(self, device_id: str) -> None:
        if self.device_failure is not None:
            raise self.device_failure
        self.ended.append(device_id)
        self.device_list = [d for d in self.device_list if d.id != device_id]

    async def end_other_devices(self) -> None:
        self.ended.append(None)
        self.device_list = [d for d in self.device_list if d.current]


@dataclass
class FakeEmailSignIn:
    """The hub's e-mail sign-in: codes "sent" are recorded; `code` is the right one."""

    code: str = "424242"
    send_failures: list[TalkieError] = field(default_factory=list)
    verify_failures: list[TalkieError] = field(default_factory=list)
    codes_sent: list[str] = field(default_factory=list)
    tried: list[tuple[str, str]] = field(default_factory=list)

    async def send_code(self, email: str) -> None:
        if self.send_failures:
            raise self.send_failures.pop(0)
        self.codes_sent.append(email)

    async def verify(self, email: str, code: str) -> str:
        self.tried.append((email, code))
        if self.verify_failures:
            raise self.verify_failures.pop(0)
        if code != self.code:
            raise AssertionError(f"unexpected code {code}")
        return f"session for {email}"


def cuckoo_app(backend: FakeCuckooBackend, tmp_path: Any) -> TalkieApp:
    """The real app on the fake backend, with settings in the test's folder."""
    settings = Settings(downloads_dir=tmp_path / "downloads")
    return TalkieApp(settings=settings, known=KnownServers.load(), backend=backend)
