"""A backend of the test suite with the composer's extras: it takes files, lets a message pick
its model, and transcribes recordings — as a Minara gateway does — speaking no protocol.

It implements the interface (`Attaches`, `ChoosesModel`, `Dictates`) and the session's
`prepare(text, *, attachments, model, reasoning_effort, voice_input_key)`; it records what the
screen handed it, answers each file with "I received NAME, SIZE" as the reference gateway
does, and refuses an unknown model (or an effort on a model without reasoning) with the
gateway's 400 before the turn starts. Uploads may be held (`hold_uploads`) to see progress.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talkie_tui.backends.base import (
    Account,
    Attachment,
    Capabilities,
    ModelChoice,
    ModelList,
    ServerInfo,
    Transcription,
)
from talkie_tui.chat.attachments import check_file
from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.errors import ServerError
from talkie_tui.protocol.talkie.models import User
from talkie_tui.ui.app import TalkieApp

ORIGIN = "https://extras.invalid"
EXTRAS = Capabilities(attachments=True, models=True, dictation=True, stop=True)
MODELS = ModelList(
    (
        ModelChoice("minara-fast", "Minara Fast"),
        ModelChoice("minara-pro", "Minara Pro", reasoning=True),
    ),
    default="minara-fast",
)


@dataclass
class Step:
    """One step of an answer, in the UI's terms."""

    change: Change
    delta: str | None = None
    lost: bool = False
    recovered: None = None
    proposes_action: bool = False
    broken: None = None
    wire: str | None = None


@dataclass
class Message:
    """The person's message with what went with it."""

    text: str
    message_id: str
    extras: dict[str, Any] = field(default_factory=dict)
    settled: bool = False
    thread_id: str | None = None
    run_id: str | None = None
    finished: bool = False
    failure: None = None


class ExtrasSession:
    """A thread that answers what it was sent, as the reference gateway does in test mode."""

    def __init__(self, backend: ExtrasBackend) -> None:
        self.backend = backend
        self.conversation = Conversation()
        self.waiting = False

    @property
    def thread_id(self) -> str | None:
        return self.conversation.thread_id

    def stop_waiting(self) -> bool:
        return False

    async def load(self, thread_id: str) -> Conversation:
        self.conversation = Conversation(thread_id)
        return self.conversation

    def prepare(self, text: str, **extras: Any) -> Message:
        self.backend.prepared.append((text, extras))
        return Message(text, f"m_{len(self.backend.prepared)}", extras)

    def again(self, text: str, message_id: str, **extras: Any) -> Message:
        self.backend.prepared.append((text, extras))
        return Message(text, message_id, extras)

    async def send(self, outgoing: Message) -> AsyncIterator[Step]:
        backend = self.backend
        talk = self.conversation
        files = outgoing.extras.get("attachments", ())
        parts = [
            AttachmentPart(a.key, a.filename, a.media_type, a.size, a.kind, a.url) for a in files
        ]
        # The person's message shows at once, as a real session shows it before the request.
        yield Step(talk.add_user_message(outgoing.message_id, outgoing.text, attachments=parts))
        model, effort = outgoing.extras.get("model"), outgoing.extras.get("reasoning_effort")
        offered = {m.id: m for m in MODELS.models}
        refused = model not in offered or (effort and not offered[model].reasoning)
        if model is not None and refused:
            outgoing.settled = True
            raise ServerError(
                f"Unknown model {model!r} or a reasoning effort it does not take.",
                status=400,
                code="invalid_model",
                retryable=False,
            )
        backend.sent.append(outgoing)
        talk.thread_id = talk.thread_id or f"t_{len(backend.sent)}"
        yield Step(talk.begin_answer(f"r_{len(backend.sent)}"))
        words = [f"I received {a.filename}, {round(a.size / 1000)} kB. " for a in files]
        if model:
            words.append(f"Answered by {model} ({effort or 'default'}). ")
        words.append("Done.")
        for piece in words:
            yield Step(talk.add_text("answer", piece), delta=piece)
        yield Step(talk.end_answer("done"))
        outgoing.settled = outgoing.finished = True


class ExtrasBackend:
    """The least a server with attachments, models and dictation must offer the chat screen."""

    def __init__(self, capabilities: Capabilities = EXTRAS) -> None:
        self.info = ServerInfo(
            "extras",
            ORIGIN,
            "minara",
            "Extras Gateway",
            sign_in="token",
            capabilities=capabilities,
        )
        self.prepared: list[tuple[str, dict[str, Any]]] = []
        self.sent: list[Message] = []
        self.uploaded: list[Path] = []
        self.recordings: list[bytes] = []
        self.transcript = "Buy two kilos of apples"
        self.upload_gate: asyncio.Event | None = None
        self.progress_seen: list[tuple[int, int]] = []

    def hold_uploads(self) -> asyncio.Event:
        """Uploads stop halfway until the returned event is set."""
        self.upload_gate = asyncio.Event()
        return self.upload_gate

    def new_session(self, thread_id: str | None = None) -> ExtrasSession:
        return ExtrasSession(self)

    async def account(self) -> Account:
        return Account(User(name="Extras Tester"))

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
        return url.startswith(ORIGIN)

    def resolve_url(self, url: str) -> str:
        return url if "://" in url else ORIGIN + url

    # --- the extras ----------------------------------------------------------------------

    async def upload(
        self, path: Path, *, progress: Callable[[int, int], None] | None = None
    ) -> Attachment:
        checked = check_file(path)  # a backend checks again: the limits are the server's
        total = checked.size
        if progress is not None:
            progress(total // 2, total)
            self.progress_seen.append((total // 2, total))
        if self.upload_gate is not None:
            await self.upload_gate.wait()
        if progress is not None:
            progress(total, total)
        self.uploaded.append(path)
        key = f"chat/files/{checked.filename}"
        return Attachment(
            key, checked.filename, checked.media_type, total, checked.kind, f"/v1/files/{key}"
        )

    async def models(self) -> ModelList:
        return MODELS

    async def transcribe(self, wav: bytes, *, language: str | None = None) -> Transcription:
        self.recordings.append(wav)
        return Transcription(self.transcript, audio_key="chat/files/voice-1.wav")


def extras_app(backend: ExtrasBackend, tmp_path: Path) -> TalkieApp:
    """The real app on the backend, with settings and known servers in the test's folder."""
    settings = Settings(downloads_dir=tmp_path / "downloads")
    return TalkieApp(settings=settings, known=KnownServers.load(), backend=backend)  # type: ignore[arg-type]
