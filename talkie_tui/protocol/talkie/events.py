"""From SSE bytes to typed events: AG-UI events plus the talkie.* custom events (§5).

Unknown event types and unknown CUSTOM names are skipped; a known event that cannot be read
becomes a `MalformedEvent` so one bad frame never ends the stream. Chunk events are expanded to
their START/CONTENT/END form, and every piece of server text is cleaned of control sequences.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import ag_ui.core as agui
from pydantic import TypeAdapter, ValidationError

from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.protocol.net.sse import MAX_EVENT_CHARS, iter_event_data
from talkie_tui.protocol.talkie.cards import Card
from talkie_tui.protocol.talkie.models import Action, OpenLink, UsageMeter

__all__ = [
    "MAX_EVENT_CHARS",
    "ActionProposed",
    "CardReceived",
    "DecodedEvent",
    "EventDecoder",
    "LinkSuggested",
    "MalformedEvent",
    "StreamTruncated",
    "UsageReported",
    "event_to_json",
    "iter_event_data",
]

KNOWN_TYPES = frozenset(t.value for t in agui.EventType)
_ADAPTER: TypeAdapter[agui.Event] = TypeAdapter(agui.Event)
_VALIDATE_JSON = _ADAPTER.validator.validate_json  # the hot path, without the wrapper's cost
_T = agui.EventType


@dataclass(frozen=True, slots=True)
class CardReceived:
    """`talkie.card`: a result card (§6)."""

    card: Card


@dataclass(frozen=True, slots=True)
class ActionProposed:
    """`talkie.action`: an action awaiting a human decision (§8)."""

    action: Action


@dataclass(frozen=True, slots=True)
class LinkSuggested:
    """`talkie.open`: a link the user may open with a gesture."""

    link: OpenLink


@dataclass(frozen=True, slots=True)
class UsageReported:
    """`talkie.usage`: fresh usage meters."""

    usage: tuple[UsageMeter, ...]


@dataclass(frozen=True, slots=True)
class MalformedEvent:
    """A known event the client could not read; shown as a warning, the stream goes on."""

    type: str
    reason: str


@dataclass(frozen=True, slots=True)
class StreamTruncated:
    """The stream ended without RUN_FINISHED or RUN_ERROR.

    `abandoned` when the client itself closed it over what the server sent (an event over
    the size cap, a body it cannot decode): the thread holds the same, so waiting cannot help.
    """

    reason: str
    abandoned: bool = False


DecodedEvent = (
    agui.BaseEvent
    | CardReceived
    | ActionProposed
    | LinkSuggested
    | UsageReported
    | MalformedEvent
    | StreamTruncated
)


def _metadata_text(event: agui.BaseEvent, key: str) -> None:
    metadata = event.metadata
    if metadata and isinstance(metadata.get(key), str):
        metadata[key] = clean_text(metadata[key])


def _clean(event: agui.BaseEvent) -> agui.BaseEvent:
    """Clean the server text an event carries to the screen."""
    kind = event.type
    if kind is _T.TEXT_MESSAGE_CONTENT:
        delta = event.delta  # type: ignore[attr-defined]
        if not delta.isprintable():
            event.delta = clean_text(delta)  # type: ignore[attr-defined]
    elif kind is _T.TOOL_CALL_START:
        event.tool_call_name = clean_text(event.tool_call_name)  # type: ignore[attr-defined]
        _metadata_text(event, "label")
    elif kind is _T.TOOL_CALL_END:
        _metadata_text(event, "error")
    elif kind is _T.RUN_ERROR:
        event.message = clean_text(event.message)  # type: ignore[attr-defined]
        if event.code:  # type: ignore[attr-defined]
            event.code = clean_text(event.code)  # type: ignore[attr-defined]
    return event


def _custom(event: agui.CustomEvent) -> DecodedEvent | None:
    name, value = event.name, event.value
    try:
        if name == "talkie.card":
            return CardReceived(Card.model_validate(value))
        if name == "talkie.action":
            return ActionProposed(Action.model_validate(value))
        if name == "talkie.open":
            return LinkSuggested(OpenLink.model_validate(value))
        if name == "talkie.usage":
            usage = value.get("usage") if isinstance(value, dict) else None
            if not isinstance(usage, list):
                return MalformedEvent(name, _("usage is not a list"))
            return UsageReported(tuple(UsageMeter.model_validate(item) for item in usage))
    except ValidationError as error:
        return MalformedEvent(name, _first_problem(error))
    return None


def _first_problem(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    # pydantic's message may quote the server's value: it reaches the screen, so it is cleaned.
    return clean_text(f"{where}: {first['msg']}" if where else str(first["msg"]))


def _repair(obj: dict[str, Any]) -> dict[str, Any]:
    """Fix what real producers get wrong but the meaning survives (float times, new outcomes)."""
    obj = dict(obj)
    if not isinstance(obj.get("timestamp"), int):
        obj.pop("timestamp", None)
    outcome = obj.get("outcome")
    if outcome is not None and not (
        isinstance(outcome, dict) and outcome.get("type") in ("success", "interrupt", "cancelled")
    ):
        obj.pop("outcome")
    return {key: value for key, value in obj.items() if value is not None}


def _parse_object(obj: object) -> DecodedEvent | None:
    """A decoded JSON event: the AG-UI model, a MalformedEvent, or None for an unknown type."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return MalformedEvent("?", _("not an AG-UI event (no 'type')"))
    kind = obj["type"]
    if kind not in KNOWN_TYPES:
        return None
    try:
        return _ADAPTER.validate_python(_repair(obj))
    except ValidationError as error:
        return MalformedEvent(kind, _first_problem(error))


class EventDecoder:
    """Decodes one stream's event data; stateful because chunk events open and close items."""

    def __init__(self) -> None:
        self._open_chunks: dict[str | None, agui.BaseEvent] = {}

    def decode(self, data: str) -> list[DecodedEvent]:
        """The events one SSE `data` payload stands for (usually one, none if unknown)."""
        event: agui.BaseEvent
        try:
            event = _VALIDATE_JSON(data)
        except ValidationError:
            parsed = self._tolerant(data)
            if not isinstance(parsed, agui.BaseEvent):
                return [] if parsed is None else [parsed]
            event = parsed
        return self._route(event)

    def decode_object(self, obj: object) -> list[DecodedEvent]:
        """Like `decode`, for an event already parsed from JSON (e.g. a decision's `events`)."""
        parsed = _parse_object(obj)
        if not isinstance(parsed, agui.BaseEvent):
            return [] if parsed is None else [parsed]
        return self._route(parsed)

    def _route(self, event: agui.BaseEvent) -> list[DecodedEvent]:
        cls = type(event)
        if cls is agui.TextMessageContentEvent and not self._open_chunks:
            # The hot path: most events of a long answer are text deltas.
            if not event.delta.isprintable():  # type: ignore[attr-defined]
                event.delta = clean_text(event.delta)  # type: ignore[attr-defined]
            return [event]
        if self._open_chunks or cls in _CHUNK_CLASSES:
            return self._with_chunks(event)
        if isinstance(event, agui.CustomEvent):
            custom = _custom(event)
            return [] if custom is None else [custom]
        return [_clean(event)]

    def finish(self) -> list[DecodedEvent]:
        """Close every chunk stream still open at the end of the stream."""
        return self._close_lanes(None, everything=True)

    def _tolerant(self, data: str) -> DecodedEvent | None:
        try:
            obj = json.loads(data, strict=False)
        except (ValueError, RecursionError):  # deeply nested JSON exhausts the parser
            return MalformedEvent("?", _("not JSON"))
        return _parse_object(obj)

    # --- TEXT_MESSAGE_CHUNK / TOOL_CALL_CHUNK ---------------------------------------------

    def _with_chunks(self, event: agui.BaseEvent) -> list[DecodedEvent]:
        kind = event.type
        lane = getattr(event, "subagent_run_id", None)
        if kind is _T.TEXT_MESSAGE_CHUNK or kind is _T.TOOL_CALL_CHUNK:
            return self._chunk(event, lane)
        out: list[DecodedEvent] = []
        if kind in _CLOSES_ALL:
            out += self._close_lanes(None, everything=True)
        elif (
            kind.value.startswith(_CLOSES_LANE_PREFIXES)
            and kind is not _T.REASONING_ENCRYPTED_VALUE
        ):
            out += self._close_lanes(lane)
        if isinstance(event, agui.CustomEvent):
            custom = _custom(event)
            if custom is not None:
                out.append(custom)
        else:
            out.append(_clean(event))
        return out

    def _chunk(self, event: agui.BaseEvent, lane: str | None) -> list[DecodedEvent]:
        is_text = event.type is _T.TEXT_MESSAGE_CHUNK
        item_id = event.message_id if is_text else event.tool_call_id  # type: ignore[attr-defined]
        delta = event.delta  # type: ignore[attr-defined]
        opened = self._open_chunks.get(lane)
        out: list[DecodedEvent] = []
        same_kind = opened is not None and (opened.type is _T.TEXT_MESSAGE_START) == is_text
        if opened is not None and same_kind and item_id in (None, _item_id(opened)):
            item_id = _item_id(opened)
        else:
            out += self._close_lanes(lane)
            if item_id is None:
                return [MalformedEvent(event.type.value, _("the first chunk has no id"))]
            if is_text:
                role = event.role or "assistant"  # type: ignore[attr-defined]
                start: agui.BaseEvent = agui.TextMessageStartEvent(message_id=item_id, role=role)
            else:
                name = event.tool_call_name  # type: ignore[attr-defined]
                if not name:
                    return [MalformedEvent(event.type.value, _("the first chunk has no tool name"))]
                start = _clean(
                    agui.ToolCallStartEvent(
                        tool_call_id=item_id,
                        tool_call_name=name,
                        parent_message_id=event.parent_message_id,  # type: ignore[attr-defined]
                        metadata=event.metadata,
                    )
                )
            self._open_chunks[lane] = start
            out.append(start)
        if delta:
            if is_text:
                out.append(_clean(agui.TextMessageContentEvent(message_id=item_id, delta=delta)))
            else:
                out.append(agui.ToolCallArgsEvent(tool_call_id=item_id, delta=delta))
        return out

    def _close_lanes(self, lane: str | None, *, everything: bool = False) -> list[DecodedEvent]:
        lanes = list(self._open_chunks) if everything else [lane]
        out: list[DecodedEvent] = []
        for key in lanes:
            opened = self._open_chunks.pop(key, None)
            if opened is None:
                continue
            if opened.type is _T.TEXT_MESSAGE_START:
                out.append(agui.TextMessageEndEvent(message_id=_item_id(opened)))
            else:
                out.append(agui.ToolCallEndEvent(tool_call_id=_item_id(opened)))
        return out


def _item_id(event: agui.BaseEvent) -> str:
    if event.type is _T.TEXT_MESSAGE_START:
        return event.message_id  # type: ignore[attr-defined, no-any-return]
    return event.tool_call_id  # type: ignore[attr-defined, no-any-return]


_CHUNK_CLASSES = (agui.TextMessageChunkEvent, agui.ToolCallChunkEvent)
_CLOSES_ALL = frozenset({_T.RUN_STARTED, _T.RUN_FINISHED, _T.RUN_ERROR, _T.MESSAGES_SNAPSHOT})
_CLOSES_LANE_PREFIXES = ("TEXT_", "TOOL_CALL_", "STATE_", "CUSTOM", "STEP_", "REASONING_")


def event_to_json(event: DecodedEvent) -> str:
    """One JSON line for `talkie ask --json`: AG-UI events in wire form, talkie events as CUSTOM."""
    if isinstance(event, agui.BaseEvent):
        return _escape_c1(event.model_dump_json(by_alias=True, exclude_none=True))
    if isinstance(event, CardReceived):
        payload: dict[str, Any] = _custom_json("talkie.card", event.card)
    elif isinstance(event, ActionProposed):
        payload = _custom_json("talkie.action", event.action)
    elif isinstance(event, LinkSuggested):
        payload = _custom_json("talkie.open", event.link)
    elif isinstance(event, UsageReported):
        usage = [meter.model_dump(mode="json", by_alias=True) for meter in event.usage]
        payload = {"type": "CUSTOM", "name": "talkie.usage", "value": {"usage": usage}}
    elif isinstance(event, MalformedEvent):
        payload = {"type": "talkie.malformed", "eventType": event.type, "reason": event.reason}
    else:
        payload = {"type": "talkie.truncated", "reason": event.reason}
        if event.abandoned:
            payload["abandoned"] = True
    return _escape_c1(json.dumps(payload, ensure_ascii=False))


_C1 = re.compile("[\x7f-\x9f]")


def _escape_c1(line: str) -> str:
    """JSON escapes only C0 controls; DEL and C1 (8-bit CSI…) would reach the terminal raw."""
    return _C1.sub(lambda match: f"\\u{ord(match.group()):04x}", line)


def _custom_json(name: str, model: Card | Action | OpenLink) -> dict[str, Any]:
    value = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {"type": "CUSTOM", "name": name, "value": value}
