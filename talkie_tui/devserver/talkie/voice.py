"""§10 voice sessions: the client secret, tools, transcripts and usage of one voice call.

The speech provider is the fake one (`fake_voice/`); this module only knows it through the
`VoiceProvider` protocol, so nothing heavy (aiortc, numpy) is imported for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.ids import new_id
from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.talkie import voice_tools
from talkie_tui.devserver.talkie.accounts import VOICE_MINUTES_PER_DAY
from talkie_tui.devserver.talkie.actions import ActionService
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.errors import ApiError, Unavailable, invalid_request, not_found
from talkie_tui.devserver.talkie.run_input import thread_title
from talkie_tui.devserver.talkie.storage import Storage

logger = logging.getLogger(__name__)

SUPPORTED_LOCALES = ("en", "cs")
DEFAULT_LOCALE = "en"
# Extra consent words for the client's built-in vocabularies (§10.1 `consent`).
CONSENT: dict[str, dict[str, list[str]]] = {
    "cs": {"confirm": ["ano", "potvrzuji"], "refuse": ["ne", "zruš"]},
    "en": {"confirm": ["yes", "confirm"], "refuse": ["no", "cancel"]},
}
THREAD_TITLES = {"cs": "Hlasový rozhovor", "en": "Voice conversation"}
INSTRUCTIONS = (
    "You are the voice assistant of the Talkie Demo CRM. Answer briefly, in the user's "
    "language. Use the tools for every fact about the CRM. Never claim that an action happened "
    "before the user confirmed it."
)


class VoiceProvider(Protocol):
    """The speech provider as the voice service uses it."""

    @property
    def signaling_url(self) -> str:
        """Where clients POST their SDP offer."""
        ...

    def hang_up(self, voice_session_id: str, reason: str) -> None:
        """End the provider call of a voice session (usage used up, session ended)."""
        ...


@dataclass(frozen=True)
class VoiceGrant:
    """What a redeemed client secret opens: one provider call of one voice session."""

    voice_session_id: str
    user_id: str
    thread_id: str
    locale: str
    instructions: str
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class _Secret:
    voice_session_id: str
    expires_at: str


def _digest(secret: str) -> str:
    # Only digests are kept, so the secrets never sit in memory dumps or logs longer than needed.
    return hashlib.sha256(secret.encode()).hexdigest()


def pick_locale(wanted: str | None) -> str:
    """A supported locale for the request's `locale` (`cs-CZ` → `cs`; unknown → English)."""
    if wanted:
        language = wanted.replace("_", "-").split("-")[0].lower()
        if language in SUPPORTED_LOCALES:
            return language
    return DEFAULT_LOCALE


class VoiceService:
    """Creates voice sessions and serves their tool, transcript and usage endpoints."""

    def __init__(self, storage: Storage, config: ServerConfig, actions: ActionService) -> None:
        self._storage = storage
        self._config = config
        self._actions = actions
        self._secrets: dict[str, _Secret] = {}
        self.provider: VoiceProvider | None = None

    # --- sessions ----------------------------------------------------------------------------

    def create_session(
        self, user_id: str, thread_id: str | None, locale: str | None
    ) -> dict[str, Any]:
        """Start a session bound to the user and a thread (new, or one of theirs): §10.1."""
        if self.provider is None:
            raise Unavailable("The voice provider is not running.")
        chosen = pick_locale(locale)
        used_today = self._storage.voice_seconds_since(user_id, clock.iso(clock.start_of_today()))
        if used_today >= VOICE_MINUTES_PER_DAY * 60:
            raise ApiError(
                429,
                "quota_exceeded",
                f"Today's {VOICE_MINUTES_PER_DAY} minutes of voice are used up.",
            )
        thread = self._thread_for(user_id, thread_id, chosen)
        now = clock.now()
        session_id = new_id("v")
        self._storage.create_voice_session(
            session_id,
            user_id,
            thread["id"],
            chosen,
            self._config.voice_max_seconds,
            clock.iso(now),
        )
        secret = f"ek_{secrets.token_urlsafe(24)}"
        expires_at = clock.iso(clock.later(self._config.voice_secret_seconds, now))
        self._forget_expired_secrets()
        self._secrets[_digest(secret)] = _Secret(session_id, expires_at)
        logger.info("voice session %s in thread %s (%s)", session_id, thread["id"], chosen)
        return {
            "voiceSessionId": session_id,
            "threadId": thread["id"],
            "transport": "webrtc",
            "eventProtocol": "openai-realtime/1",
            "signaling": {"type": "sdp-post", "url": self.provider.signaling_url},
            "clientSecret": secret,
            "expiresAt": expires_at,
            "maxSeconds": self._config.voice_max_seconds,
            "warnSeconds": self._config.voice_warn_seconds,
            "locale": chosen,
            "labels": voice_tools.labels(chosen == "cs"),
            "consent": CONSENT[chosen],
        }

    def _thread_for(self, user_id: str, thread_id: str | None, locale: str) -> Row:
        wanted = thread_id or new_id("t")
        thread = self._storage.get_thread(user_id, wanted)
        if thread is None:
            now = clock.iso(clock.now())
            self._storage.create_thread(user_id, wanted, THREAD_TITLES[locale], "voice", now)
            thread = self._storage.get_thread(user_id, wanted)
        if thread is None:  # the id belongs to another user's thread
            raise not_found(f"Thread {wanted}")
        return thread

    def redeem(self, secret: str) -> VoiceGrant | None:
        """The grant of a client secret, once: None when unknown, expired, used or ended."""
        self._forget_expired_secrets()
        entry = self._secrets.pop(_digest(secret), None)
        if entry is None:
            return None
        row = self._storage.find_voice_session(entry.voice_session_id)
        if row is None or row["ended_at"] is not None:
            return None
        return VoiceGrant(
            voice_session_id=row["id"],
            user_id=row["user_id"],
            thread_id=row["thread_id"],
            locale=row["locale"],
            instructions=INSTRUCTIONS,
            tools=voice_tools.definitions(),
        )

    def _forget_expired_secrets(self) -> None:
        now = clock.iso(clock.now())
        for digest, entry in list(self._secrets.items()):
            if entry.expires_at <= now:
                del self._secrets[digest]

    def _load(self, user_id: str, session_id: str) -> Row:
        row = self._storage.get_voice_session(user_id, session_id)
        if row is None:
            raise not_found(f"Voice session {session_id}")
        return row

    def _live(self, user_id: str, session_id: str) -> Row:
        row = self._load(user_id, session_id)
        if row["ended_at"] is not None:
            raise ApiError(410, "expired", f"Voice session {session_id} has ended.")
        return row

    # --- §10.2 tools -------------------------------------------------------------------------

    async def call_tool(
        self, user_id: str, session_id: str, name: str, call_id: str, arguments: str
    ) -> dict[str, Any]:
        """Run a tool the provider asked for, once per call id, in the session's thread."""
        session = self._live(user_id, session_id)
        tool = voice_tools.VOICE_TOOLS.get(name)
        if tool is None:
            raise not_found(f"Voice tool {name}")
        parsed = _parse_arguments(arguments)
        if self._storage.get_thread(user_id, session["thread_id"]) is None:
            raise not_found(f"Thread {session['thread_id']}")
        claimed = self._storage.add_voice_tool_call(
            session_id, call_id, name, arguments, clock.iso(clock.now())
        )
        if not claimed:
            raise ApiError(
                409, "conflict", f"Tool call {call_id} was already made in this voice session."
            )
        result = await voice_tools.run_voice_tool(
            tool,
            parsed,
            call_id=call_id,
            thread_id=session["thread_id"],
            user_id=user_id,
            locale=session["locale"],
            config=self._config,
            actions=self._actions,
        )
        self._storage.finish_voice_tool_call(session_id, call_id, result.ok, result.output)
        if result.cards:
            # The cards stay in the thread; the spoken answer arrives as a transcript.
            self._storage.add_message(
                session["thread_id"],
                new_id("m"),
                "assistant",
                "",
                clock.iso(clock.now()),
                cards=result.cards,
                channel="voice",
            )
        return {"ok": result.ok, "output": result.output, "events": result.events}

    # --- §10.3 transcript and usage ----------------------------------------------------------

    def add_transcript(
        self, user_id: str, session_id: str, role: str, text: str, item_id: str
    ) -> str:
        """Store a final transcript in the thread, once per provider item; returns its id."""
        session = self._load(user_id, session_id)
        message_id = f"m_{session_id}_{item_id}"
        thread = self._storage.get_thread(user_id, session["thread_id"])
        if thread is None:
            raise not_found(f"Thread {session['thread_id']}")
        stored = self._storage.add_message(
            thread["id"], message_id, role, text, clock.iso(clock.now()), channel="voice"
        )
        if stored and role == "user" and thread["title"] == THREAD_TITLES[session["locale"]]:
            self._storage.set_thread_title(thread["id"], thread_title(text))
        return message_id

    def report_usage(
        self, user_id: str, session_id: str, seconds: float, final: bool
    ) -> dict[str, Any]:
        """Record the seconds used so far; the session ends when final or out of time."""
        session = self._load(user_id, session_id)
        limit = float(session["max_seconds"])
        # Reports carry the running total, so a late (smaller) one never gives time back.
        used = min(max(float(session["used_seconds"]), seconds), limit)
        remaining = max(0.0, limit - used)
        now = clock.iso(clock.now())
        ended = final or remaining <= 0 or session["ended_at"] is not None
        self._storage.add_voice_usage_report(session_id, seconds, final, remaining, now)
        self._storage.update_voice_usage(session_id, used, now if ended else None)
        if ended and session["ended_at"] is None:
            self._end(session_id, "final report" if final else "time used up")
        return {"ok": True, "remainingSeconds": _number(remaining), "ended": ended}

    def _end(self, session_id: str, reason: str) -> None:
        logger.info("voice session %s ended: %s", session_id, reason)
        for digest, entry in list(self._secrets.items()):
            if entry.voice_session_id == session_id:
                del self._secrets[digest]
        if self.provider is not None:
            self.provider.hang_up(session_id, reason)

    # --- test mode ---------------------------------------------------------------------------

    def inspect(self, user_id: str, session_id: str) -> dict[str, Any]:
        """Everything recorded about a session (test mode only)."""
        session = self._load(user_id, session_id)
        return {
            "session": {
                "voiceSessionId": session["id"],
                "threadId": session["thread_id"],
                "locale": session["locale"],
                "maxSeconds": session["max_seconds"],
                "usedSeconds": _number(session["used_seconds"]),
                "createdAt": session["created_at"],
                "endedAt": session["ended_at"],
            },
            "usageReports": [
                {
                    "seconds": _number(row["seconds"]),
                    "final": bool(row["final"]),
                    "remainingSeconds": _number(row["remaining"]),
                    "receivedAt": row["created_at"],
                }
                for row in self._storage.voice_usage_reports(session_id)
            ],
            "toolCalls": [
                {
                    "callId": row["call_id"],
                    "name": row["name"],
                    "arguments": row["arguments"],
                    "ok": None if row["ok"] is None else bool(row["ok"]),
                    "output": row["output"],
                }
                for row in self._storage.voice_tool_calls(session_id)
            ],
        }


def _parse_arguments(arguments: str) -> dict[str, Any]:
    """The tool arguments: a JSON object in a string, as the provider produced them."""
    if not arguments.strip():
        return {}
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise invalid_request(f"arguments is not valid JSON: {exc}.") from exc
    if not isinstance(parsed, dict):
        raise invalid_request("arguments must be a JSON object.")
    return parsed


def _number(value: float) -> float | int:
    """Seconds for the wire: whole ones as an int (775, not 775.0), else to the millisecond."""
    rounded = round(float(value), 3)
    return int(rounded) if rounded.is_integer() else rounded
