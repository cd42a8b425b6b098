"""The Minara reducer: `{type, data}` chat events folded into the conversation.

Live turns and turns rebuilt from stored session rows (`conversation_from_rows`) go through
the same `apply`, so what was seen live is what history shows. Unknown event types and fields
are skipped, and so are events whose data has the wrong shape: bad input never raises, except
a stream of a newer protocol version, which is refused (`UnsupportedProtocolVersion`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from itertools import count
from typing import Any, cast

from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import (
    AttachmentPart,
    InterjectionPart,
    Question,
    QuestionKind,
    QuestionOption,
    QuestionPart,
    TextPart,
    TodoPart,
    Turn,
    UiBlockPart,
)
from talkie_tui.core.errors import UnsupportedProtocolVersion
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

__all__ = ["PROTOCOL_VERSION", "MinaraConversation", "attachment_parts", "conversation_from_rows"]

PROTOCOL_VERSION = 1
"""The stream protocol version this reducer reads (`start.protocol_version`, absent = 1)."""

_QUESTION_KINDS: frozenset[str] = frozenset({"select", "confirm", "input", "secret"})
_OUTCOMES: frozenset[str] = frozenset({"answered", "timeout", "cancelled"})
# The fields each known block kind needs, and their types; other fields are kept as sent.
_BLOCK_FIELDS: dict[str, dict[str, type]] = {
    "markdown": {"text": str},
    "table": {"columns": list, "rows": list},
    "kv": {"items": list},
    "link": {"label": str, "url": str},
    "chart": {"series": list},
}


def _str(data: Mapping[str, Any], key: str) -> str | None:
    """`data[key]` when it is a string, else None."""
    value = data.get(key)
    return value if isinstance(value, str) else None


_SENTENCE_END = re.compile(r"""(?:[.!?:…]["'”’)\]]*|\n)\s*$""")
"""Text that ends a sentence or a line: an interjection may be shown after it."""


def _text(data: Mapping[str, Any], key: str) -> str | None:
    """`data[key]` cleaned for display when it is a string, else None."""
    value = _str(data, key)
    return clean_text(value) if value is not None else None


def _cleaned(value: Any, depth: int = 0) -> Any:
    """A JSON value with every string (keys too) cleaned; nesting past 32 levels is dropped."""
    if isinstance(value, str):
        return clean_text(value)
    if depth > 32:
        return None
    if isinstance(value, list):
        return [_cleaned(item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): _cleaned(v, depth + 1) for k, v in value.items()}
    return value


class MinaraConversation(Conversation):
    """A conversation of a Minara gateway: `apply` folds one `{type, data}` event in."""

    def __init__(self, thread_id: str | None = None) -> None:
        super().__init__(thread_id)
        self._seen_tools: set[str] = set()
        self._blocks: dict[str, UiBlockPart] = {}
        self._segment_ids = count(1)
        self._last_text: TextPart | None = None  # the text segment the last delta went to
        self._handlers: dict[str, Callable[[Mapping[str, Any]], Change]] = {
            "start": self._on_start,
            "text_delta": self._on_text_delta,
            "tool_call_start": self._on_tool_start,
            "tool_call_end": self._on_tool_end,
            "ui_block": self._on_ui_block,
            "todos": self._on_todos,
            "pending_question_added": self._on_question_added,
            "pending_question_resolved": self._on_question_resolved,
            "user_interjection": self._on_interjection,
            "done": self._on_done,
            "error": self._on_error,
        }

    def apply(self, event: Mapping[str, Any]) -> Change:
        """Fold one event into the conversation and return what changed (None: nothing)."""
        # `type(...) is dict` first: an ABC check per event is a fair part of a fast stream.
        if type(event) is not dict and not isinstance(event, Mapping):
            return None
        kind, data = event.get("type"), event.get("data", {})
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None or (type(data) is not dict and not isinstance(data, Mapping)):
            return None
        return handler(data)

    # --- the turn ------------------------------------------------------------------------

    def _on_start(self, data: Mapping[str, Any]) -> Change:
        version = data.get("protocol_version")
        if (
            isinstance(version, int | float)
            and not isinstance(version, bool)
            and version > PROTOCOL_VERSION
        ):
            raise UnsupportedProtocolVersion(
                _(
                    "The gateway speaks Minara stream protocol version {version}; "
                    "this client reads version {supported}."
                ).format(version=version, supported=PROTOCOL_VERSION)
            )
        session_id = _str(data, "session_id")
        if session_id is not None:
            self.thread_id = session_id
        turn_id = _str(data, "turn_id")
        current = self._current
        if current is not None:
            if not current.parts and turn_id in (None, current.run_id):
                current.run_id = turn_id or current.run_id
                current.state = "streaming"
                return current
            self.end_answer("truncated")  # a new turn began before this one said done
        turn = self.begin_answer(turn_id)
        if turn_id is not None:
            turn.id = turn_id
        return turn

    def _on_done(self, data: Mapping[str, Any]) -> Change:
        turn = self._current
        if turn is not None:
            pending = data.get("pending_interjections")
            if isinstance(pending, list):
                turn.pending_interjections = [
                    clean_text(text) for text in pending if isinstance(text, str) and text
                ]
        return self.end_answer("cancelled" if data.get("interrupted") is True else "done")

    def _on_error(self, data: Mapping[str, Any]) -> Change:
        message = _text(data, "message") or _("The agent failed without saying why.")
        code = _text(data, "code")
        return self.fail(message, code=code, retryable=data.get("retryable") is True)

    def discard_open_answer(self) -> bool:
        """Remove the answer being written when it holds only reopened questions (a turn still
        running, rebuilt from rows): its replay from the live buffer shows it whole, in place.
        True when there was one."""
        turn = self._current
        if turn is None or turn.run_id is not None or not turn.parts:
            return False
        if not all(isinstance(part, QuestionPart) for part in turn.parts):
            return False
        for part in turn.parts:
            if isinstance(part, QuestionPart):
                self.questions.pop(part.question_id, None)
        self.turns.remove(turn)
        self._current = None
        return True

    def reopen_questions(self, pending: Any) -> None:
        """Put questions still waiting (a session's `pending_questions`) into the last answer,
        or into a new one when the last turn is the person's (its answer is being written)."""
        if not isinstance(pending, list) or not pending:
            return
        last = self.turns[-1] if self.turns else None
        if last is not None and last.role == "assistant" and self._current is None:
            self._current = last  # reopened to take its questions, then closed as it was
            for payload in pending:
                self.apply({"type": "pending_question_added", "data": payload})
            self._current = None
            return
        self.answer()
        for payload in pending:
            self.apply({"type": "pending_question_added", "data": payload})

    # --- what the turn shows -------------------------------------------------------------

    def _on_text_delta(self, data: Mapping[str, Any]) -> Change:
        text = data.get("text")
        if not text or type(text) is not str:
            return None
        text = clean_text(text)
        turn = self._current
        if turn is not None and turn.parts:
            tail = turn.parts[-1]
            if type(tail) is TextPart and not tail.done and tail is self._last_text:
                tail.chunks.append(text)  # the open segment grows (the common case, fast)
                return tail
        turn = self.answer()
        last = turn.parts[-1] if turn.parts else None
        if isinstance(last, TextPart) and self.text_part(last.message_id) is last:
            part = self.add_text(last.message_id, text)
        else:
            part = self.add_text(f"{turn.id}/text-{next(self._segment_ids)}", text)
        self._last_text = part
        return part

    def _on_tool_start(self, data: Mapping[str, Any]) -> Change:
        tool_id, name = _str(data, "id"), _text(data, "name")
        if tool_id is None or name is None or tool_id in self._seen_tools:
            return None  # a start seen again (a replay) is shown once
        self._seen_tools.add(tool_id)
        return self.start_tool(tool_id, name, _text(data, "label") or name)

    def _on_tool_end(self, data: Mapping[str, Any]) -> Change:
        tool_id, ok = _str(data, "id"), data.get("ok")
        if tool_id is None or not isinstance(ok, bool):
            return None
        part = self.end_tool(tool_id, failed=not ok, error=_text(data, "error") or None)
        if part is not None and ok:
            part.error = None  # a later end that succeeded wins, as the stored row keeps it
        return part

    def _on_ui_block(self, data: Mapping[str, Any]) -> Change:
        block_id, block = _str(data, "id"), data.get("block")
        if block_id is None or not isinstance(block, Mapping):
            return None
        kind = _str(block, "kind")
        if kind is None:
            return None
        fields = _BLOCK_FIELDS.get(kind)
        if fields is None:
            if _str(block, "fallback_text") is None:
                return None  # an unknown kind without a fallback shows nothing
        elif not all(isinstance(block.get(key), type_) for key, type_ in fields.items()):
            return None
        cleaned = cast(dict[str, Any], _cleaned(dict(block)))
        existing = self._blocks.get(block_id)
        if existing is not None:  # the same block sent again replaces it in place
            existing.kind, existing.data = kind, cleaned
            return existing
        part = UiBlockPart(block_id, kind, cleaned)
        self._blocks[block_id] = part
        return self.add_part(part)

    def _on_todos(self, data: Mapping[str, Any]) -> Change:
        raw = data.get("items")
        if not isinstance(raw, list):
            return None
        items = [
            (clean_text(item["text"]), item.get("done") is True)
            for item in raw
            if isinstance(item, Mapping) and isinstance(item.get("text"), str)
        ]
        turn = self.answer()
        for part in turn.parts:
            if isinstance(part, TodoPart):
                part.items = items  # replaced whole, shown in place
                return part
        part = TodoPart(items)
        turn.parts.insert(0, part)  # the turn's list heads it, live and in history alike
        return part

    def _on_question_added(self, data: Mapping[str, Any]) -> Change:
        question_id, kind, raw = _str(data, "id"), _str(data, "kind"), data.get("questions")
        if question_id is None or kind not in _QUESTION_KINDS or not isinstance(raw, list):
            return None
        existing = self.questions.get(question_id)
        if existing is not None:
            return None  # asked again (a replay, or history and the live buffer): shown once
        questions = [q for q in (_question(item) for item in raw) if q is not None]
        asked_by = data.get("asked_by")
        part = QuestionPart(
            question_id,
            cast(QuestionKind, kind),
            questions,
            asked_by={
                clean_text(str(k)): clean_text(v) for k, v in asked_by.items() if isinstance(v, str)
            }
            if isinstance(asked_by, Mapping)
            else {},
            expires_at=_text(data, "expires_at"),
            write_endpoint=_str(data, "writeEndpoint"),
        )
        self.questions[question_id] = part
        return self.add_part(part)

    def _on_question_resolved(self, data: Mapping[str, Any]) -> Change:
        question_id = _str(data, "id")
        if question_id is None:
            return None
        outcome = _str(data, "outcome")
        return self.settle_question(question_id, outcome if outcome in _OUTCOMES else "answered")

    def _on_interjection(self, data: Mapping[str, Any]) -> Change:
        """The person's words taken into the turn, where they were taken; but never in the
        middle of a sentence: echoed while a paragraph was being written that had not reached
        a sentence's end, they stand just before it, and the paragraph goes on unbroken. The
        stream and the stored row come through here alike, so both show it in one place."""
        message = _text(data, "message")
        if message is None:
            return None
        part = InterjectionPart(message)
        turn = self._current
        tail = turn.parts[-1] if turn is not None and turn.parts else None
        if (
            turn is not None
            and isinstance(tail, TextPart)
            and tail is self._last_text
            and not tail.done
            and not _SENTENCE_END.search(tail.text)
        ):
            turn.parts.insert(len(turn.parts) - 1, part)
            return part
        return self.add_part(part)


def _question(raw: Any) -> Question | None:
    """One question of `pending_question_added`, or None when it has no text."""
    if not isinstance(raw, Mapping):
        return None
    text = _text(raw, "text")
    if text is None:
        return None
    options = raw.get("options")
    return Question(
        text,
        tuple(
            QuestionOption(clean_text(option["label"]), _text(option, "description"))
            for option in (options if isinstance(options, list) else [])
            if isinstance(option, Mapping) and isinstance(option.get("label"), str)
        ),
        multi=raw.get("multi") is True,
        placeholder=_text(raw, "placeholder"),
    )


def _timestamp(value: Any) -> datetime | None:
    """An ISO 8601 time of a row, or None when there is none that parses."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _segment_events(segment: Any) -> list[dict[str, Any]]:
    """The events that would have produced one stored segment of an assistant row."""
    if not isinstance(segment, Mapping):
        return []
    kind = segment.get("type")
    if kind == "text":
        return [{"type": "text_delta", "data": {"text": segment.get("text")}}]
    if kind == "tool":
        start = {key: segment.get(key) for key in ("id", "name", "label") if key in segment}
        events = [{"type": "tool_call_start", "data": start}]
        if isinstance(segment.get("ok"), bool):
            end = {key: segment.get(key) for key in ("id", "ok", "error") if key in segment}
            events.append({"type": "tool_call_end", "data": end})
        return events
    if kind == "ui_block":
        block = {"id": segment.get("id"), "block": segment.get("block")}
        return [{"type": "ui_block", "data": block}]
    if kind == "interjection":
        return [{"type": "user_interjection", "data": {"message": segment.get("message")}}]
    if kind == "question":
        # A question asked in this turn, where it was asked; `outcome` once it was settled.
        asked = {key: value for key, value in segment.items() if key not in ("type", "outcome")}
        events = [{"type": "pending_question_added", "data": asked}]
        if segment.get("outcome") is not None:
            resolved = {"id": segment.get("id"), "outcome": segment.get("outcome")}
            events.append({"type": "pending_question_resolved", "data": resolved})
        return events
    return []


def _assistant_events(row: Mapping[str, Any], session_id: str | None) -> list[dict[str, Any]]:
    """The events of a whole stored assistant turn, from its start to its done."""
    metadata = row.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    events: list[dict[str, Any]] = [
        {"type": "start", "data": {"session_id": session_id, "turn_id": row.get("id")}}
    ]
    segments = metadata.get("segments")
    if isinstance(segments, list):
        events.extend(event for segment in segments for event in _segment_events(segment))
    else:
        events.append({"type": "text_delta", "data": {"text": row.get("content")}})
    if "todos" in metadata:
        events.append({"type": "todos", "data": {"items": metadata.get("todos")}})
    error = metadata.get("error")
    if isinstance(error, Mapping):
        events.append({"type": "error", "data": dict(error)})  # the turn ended with it
    else:
        ended: dict[str, Any] = {"interrupted": metadata.get("interrupted") is True}
        pending = metadata.get("pending_interjections")
        if isinstance(pending, list):
            ended["pending_interjections"] = pending
        events.append({"type": "done", "data": ended})
    return events


def attachment_parts(raw: Any) -> list[AttachmentPart]:
    """The files of a user row (`attachments: [{key, filename, media_type, size, kind, url}]`);
    an entry without a key or a name is dropped."""
    parts: list[AttachmentPart] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping):
            continue
        key, filename = _str(item, "key"), _text(item, "filename")
        size = item.get("size")
        if key is None or not filename:
            continue
        parts.append(
            AttachmentPart(
                key,
                filename,
                _text(item, "media_type") or "application/octet-stream",
                size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else 0,
                _text(item, "kind") or "",
                _str(item, "url"),
            )
        )
    return parts


def conversation_from_rows(session_detail: Mapping[str, Any]) -> MinaraConversation:
    """Rebuild a session's turns from `GET /v1/sessions/:id` through the live reducer."""
    session = session_detail.get("session")
    session = session if isinstance(session, Mapping) else {}
    session_id = _str(session, "id")
    conversation = MinaraConversation(session_id)
    rows = session_detail.get("messages")
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, Mapping) or not isinstance(row.get("id"), str):
            continue
        if row.get("role") == "user":
            content = row.get("content")
            conversation.add_user_message(
                row["id"],
                clean_text(content) if isinstance(content, str) else "",
                _timestamp(row.get("created_at")),
                attachments=attachment_parts(row.get("attachments")),
            )
        elif row.get("role") == "assistant":
            for event in _assistant_events(row, session_id):
                change = conversation.apply(event)
                if isinstance(change, Turn) and event["type"] == "start":
                    change.created_at = _timestamp(row.get("created_at"))
    conversation.reopen_questions(session_detail.get("pending_questions"))
    return conversation
