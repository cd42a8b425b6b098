"""Typed models of what a talkie/1 server sends: manifest, status, actions, links, threads.

Cards (`cards`) and the voice session (`voice_models`) have their own modules."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from talkie_tui.core.sanitize import SafeStr
from talkie_tui.protocol.talkie.cards import Card
from talkie_tui.protocol.talkie.wire_model import WireModel

__all__ = [
    "Action",
    "ActionStatus",
    "Auth",
    "Brand",
    "ConfirmPolicy",
    "DecisionResult",
    "HistoryMessage",
    "Limits",
    "Manifest",
    "OpenLink",
    "Status",
    "Thread",
    "ThreadHistory",
    "UsageMeter",
    "User",
]

_ACCENT = re.compile(r"^#[0-9a-fA-F]{6}$")


class Brand(WireModel):
    """The server's logo and accent colour; an accent that is not `#rrggbb` is dropped."""

    logo: str | None = None
    accent: str | None = None

    @field_validator("accent", mode="before")
    @classmethod
    def _accent_is_rrggbb(cls, value: object) -> str | None:
        return value if isinstance(value, str) and _ACCENT.match(value) else None

    @field_validator("logo", mode="before")
    @classmethod
    def _logo_is_text(cls, value: object) -> str | None:
        return value if isinstance(value, str) else None


class OAuthOffer(WireModel):
    """Where to sign in (§2.1)."""

    issuer: str
    scopes: list[str] = Field(default_factory=lambda: ["talkie", "offline_access"])


class TokenOffer(WireModel):
    """A pasted development token is accepted (§2.2)."""

    hint: SafeStr | None = None


class Auth(WireModel):
    """The sign-in methods the server offers."""

    oauth: OAuthOffer | None = None
    token: TokenOffer | None = None


class Limits(WireModel):
    """Server limits the client respects before sending."""

    max_message_chars: int = Field(default=4000, gt=0)


class Manifest(WireModel):
    """The discovery document at `/.well-known/talkie.json` (§1)."""

    spec: str
    issuer: str
    server_id: str = Field(min_length=1)
    name: SafeStr
    description: SafeStr | None = None
    locale: str | None = None
    brand: Brand = Field(default_factory=Brand)
    auth: Auth = Field(default_factory=Auth)
    endpoints: dict[str, str] = Field(default_factory=dict)
    capabilities: dict[str, Any] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=Limits)
    test_mode: bool = False

    @field_validator("endpoints", mode="before")
    @classmethod
    def _only_string_templates(cls, value: object) -> dict[str, str]:
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}

    @field_validator("brand", "auth", "limits", mode="before")
    @classmethod
    def _object_or_default(cls, value: object) -> object:
        return value if isinstance(value, dict) else {}

    @property
    def voice(self) -> dict[str, Any]:
        """`capabilities.voice`, or an empty mapping when the server has no voice."""
        voice = self.capabilities.get("voice")
        return voice if isinstance(voice, dict) else {}


class User(WireModel):
    """The signed-in person."""

    id: str = ""
    name: SafeStr = ""
    email: SafeStr = ""


class UsageMeter(WireModel):
    """One usage line, e.g. tokens today against a limit."""

    label: SafeStr
    used: float = 0
    limit: float | None = None
    unit: SafeStr = ""

    @field_validator("used", "limit", mode="after")
    @classmethod
    def _finite_or_unknown(cls, value: float | None) -> float | None:
        # Infinity/NaN from a sloppy server: an unknown figure, not a broken status.
        return value if value is None or math.isfinite(value) else None

    @field_validator("used", mode="after")
    @classmethod
    def _used_defaults_to_zero(cls, value: float | None) -> float:
        return 0.0 if value is None else value


class Status(WireModel):
    """`GET status`: who is signed in, what works, and usage."""

    user: User = Field(default_factory=User)
    chat: bool = True
    voice: bool = False
    usage: list[UsageMeter] = Field(default_factory=list)


ActionStatus = Literal["pending", "running", "done", "failed", "cancelled", "expired"]


RiskLevel = Literal["low", "medium", "high"]


class VoiceConfirm(WireModel):
    """Voice confirmation details."""

    keyword: SafeStr | None = None


class ConfirmPolicy(WireModel):
    """How the server lets a person confirm this action (a UI policy, not proof)."""

    methods: list[str] = Field(default_factory=lambda: ["button"])
    voice: VoiceConfirm | None = None


class Action(WireModel):
    """An action awaiting (or past) a human decision."""

    id: str = Field(min_length=1)
    version: int = 1
    thread_id: str | None = None
    tool_call_id: str | None = None
    summary: SafeStr
    risk_level: RiskLevel = "high"
    status: ActionStatus
    params_hash: str
    created_at: datetime | None = None
    expires_at: datetime | None = None
    undo_until: datetime | None = None
    confirm: ConfirmPolicy = Field(default_factory=ConfirmPolicy)

    @field_validator("risk_level", mode="before")
    @classmethod
    def _unknown_risk_is_high(cls, value: object) -> object:
        # A risk level we do not know is treated as the most careful one.
        return value if value in ("low", "medium", "high") else "high"

    @property
    def is_open(self) -> bool:
        """True while a decision can still change the outcome."""
        return self.status in ("pending", "running")


class DecisionResult(WireModel):
    """The answer to `POST decision`: the action now, and AG-UI events such as result cards."""

    action: Action
    events: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("events", mode="before")
    @classmethod
    def _only_objects(cls, value: object) -> list[object]:
        return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


class OpenLink(WireModel):
    """A suggested link; shown, opened only on a user's gesture."""

    url: SafeStr
    label: SafeStr = ""


class Thread(WireModel):
    """One conversation in the thread list."""

    id: str = Field(min_length=1)
    title: SafeStr = ""
    channel: SafeStr = "chat"
    created_at: datetime | None = None
    updated_at: datetime | None = None


class HistoryMessage(WireModel):
    """A stored message of a thread."""

    id: str
    role: Literal["user", "assistant"]
    content: SafeStr = ""
    created_at: datetime | None = None
    cards: list[Card] = Field(default_factory=list)
    channel: SafeStr | None = None
    events: list[dict[str, Any]] = Field(default_factory=list)
    """A talkie extension (other servers leave it out): the answer's AG-UI events as they
    streamed, text deltas joined, to show each part where it was shown live."""
    incomplete: bool = False
    """A talkie extension: the run was cut short, and this is what it had written."""

    @field_validator("content", mode="before")
    @classmethod
    def _null_is_empty(cls, value: object) -> object:
        return "" if value is None else value

    @field_validator("events", mode="before")
    @classmethod
    def _only_objects(cls, value: object) -> list[object]:
        return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


class ThreadHistory(WireModel):
    """`GET thread`: the thread, its messages and its actions."""

    thread: Thread
    messages: list[HistoryMessage] = Field(default_factory=list)
    actions: list[Action] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _drop_unreadable_items(cls, data: Any) -> Any:
        # One message the client cannot read must not hide the rest of the thread.
        if isinstance(data, dict):
            data = dict(data)
            for key, model in (("messages", HistoryMessage), ("actions", Action)):
                items = data.get(key)
                if isinstance(items, list):
                    parsed = (_parse_or_none(model, item) for item in items)
                    data[key] = [item for item in parsed if item is not None]
        return data


def _parse_or_none(model: type[BaseModel], item: object) -> BaseModel | None:
    try:
        return model.model_validate(item)
    except ValueError:
        return None
