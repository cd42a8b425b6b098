"""Typed models of what the Minara gateway's REST routes answer (`minara-stream.md`).

Field names are the gateway's own (snake_case, with `mediaType` in the upload answer); unknown
fields are ignored, display strings cleaned as they are parsed (`SafeStr`). A session's
`messages` stay plain JSON: the reducer reads them, tolerant of whatever a row holds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from talkie_tui.core.attachments import AttachmentKind
from talkie_tui.core.sanitize import SafeStr

__all__ = [
    "AttachmentRef",
    "AvailableModels",
    "MinaraModel",
    "ModelInfo",
    "SearchResult",
    "SessionDetail",
    "SessionList",
    "SessionSummary",
    "Transcript",
    "TurnAccepted",
    "TurnRequest",
    "UploadedFile",
]


class MinaraModel(BaseModel):
    """Base of every model read from the gateway: unknown fields ignored, values frozen."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


def _drop_unreadable(items: Any, model: type[BaseModel]) -> list[Any]:
    """The items of a list that `model` can read: one bad row must not hide the others."""
    if not isinstance(items, list):
        return []
    kept = []
    for item in items:
        try:
            model.model_validate(item)
        except ValueError:
            continue
        kept.append(item)
    return kept


class TurnAccepted(MinaraModel):
    """`POST /v1/chat/stream`: the turn runs in the background of this session."""

    session_id: str = Field(min_length=1)
    kind: str = "chat"
    is_new: bool = False


class SessionSummary(MinaraModel):
    """One session in `GET /v1/sessions`."""

    id: str = Field(min_length=1)
    title: SafeStr = ""
    kind: SafeStr = "chat"
    origin: SafeStr | None = None
    created_at: str | None = None
    updated_at: str | None = None
    message_count: int | None = None

    @field_validator("title", mode="before")
    @classmethod
    def _null_title(cls, value: object) -> object:
        return "" if value is None else value


class SessionList(MinaraModel):
    """`GET /v1/sessions`: most recently updated first."""

    sessions: list[SessionSummary] = Field(default_factory=list)
    total: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _readable_rows(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {**data, "sessions": _drop_unreadable(data.get("sessions"), SessionSummary)}
        return data


class SessionDetail(MinaraModel):
    """`GET /v1/sessions/:id`; `raw` is the whole answer as sent, for the reducer."""

    session: SessionSummary
    is_streaming: bool = False
    pending_questions: list[Any] = Field(default_factory=list)
    last_seq: int = 0
    raw: dict[str, Any] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _keep_raw(cls, data: Any) -> Any:
        if isinstance(data, dict):
            last_seq = data.get("last_seq")
            data = {
                **data,
                "raw": data,
                "is_streaming": data.get("is_streaming") is True,
                "last_seq": last_seq if isinstance(last_seq, int) and last_seq >= 0 else 0,
                "pending_questions": data.get("pending_questions")
                if isinstance(data.get("pending_questions"), list)
                else [],
            }
        return data


class SearchResult(MinaraModel):
    """One hit of `GET /v1/sessions/search`: the match is between « and » in `snippet`."""

    session_id: str = Field(min_length=1)
    message_id: str | None = None
    title: SafeStr = ""
    snippet: SafeStr = ""

    @field_validator("title", "snippet", mode="before")
    @classmethod
    def _null_is_empty(cls, value: object) -> object:
        return "" if value is None else value


class UploadedFile(MinaraModel):
    """`POST /v1/files`: where the gateway keeps the bytes."""

    key: str = Field(min_length=1)
    url: str | None = None
    media_type: str | None = Field(default=None, alias="mediaType")
    size: int | None = None
    uploaded_at: str | None = None


class ModelInfo(MinaraModel):
    """One model of `GET /v1/llm/available-models`."""

    id: str = Field(min_length=1)
    label: SafeStr | None = None
    reasoning: bool = False


class AvailableModels(MinaraModel):
    """`GET /v1/llm/available-models`: the models served, and the deployment's default."""

    models: list[ModelInfo] = Field(default_factory=list)
    default: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _readable_rows(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {**data, "models": _drop_unreadable(data.get("models"), ModelInfo)}
        return data


class Transcript(MinaraModel):
    """`POST /v1/voice/transcribe`: the text heard, and the key of the stored audio."""

    ok: bool = True
    text: SafeStr = ""
    file_key: str | None = None


class AttachmentRef(MinaraModel):
    """A file already uploaded, as the turn request names it."""

    key: str
    filename: str
    media_type: str
    size: int
    kind: AttachmentKind


class TurnRequest(MinaraModel):
    """The body of `POST /v1/chat/stream`; fields left None are not sent."""

    message: str
    session_id: str | None = None
    kind: str | None = "chat"
    attachments: tuple[AttachmentRef, ...] = ()
    model: str | None = None
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    voice_input_key: str | None = None
    client_message_id: str | None = None

    def body(self) -> dict[str, Any]:
        """The JSON body, without the fields not chosen."""
        body = self.model_dump(exclude_none=True)
        if not self.attachments:
            body.pop("attachments", None)
        return body
