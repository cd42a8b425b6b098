"""The frames of the Minara stream socket (`minara-stream.md`, `GET /v1/stream`) as typed values.

`parse_frame` reads one text frame the gateway sent: a frame of an unknown type gives None (the
protocol grows; it is skipped), a frame that is not a JSON object of the known shape raises
`MalformedFrame`, and one over `MAX_FRAME_BYTES` raises `FrameTooLarge` before it is decoded.
`build_frame` writes what the client sends. An event's `{type, data}` stays a plain mapping:
its fields are the reducer's business (`backends/minara/reducer.py`), not the framing's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from pydantic_core import from_json

from talkie_tui.core.errors import EventTooLarge, TalkieError
from talkie_tui.i18n import _

__all__ = [
    "MAX_FRAME_BYTES",
    "ClientFrame",
    "ErrorFrame",
    "EventFrame",
    "FrameTooLarge",
    "MalformedFrame",
    "Ping",
    "Pong",
    "ServerFrame",
    "Subscribe",
    "Subscribed",
    "Unsubscribe",
    "build_frame",
    "parse_frame",
]

MAX_FRAME_BYTES = 1024 * 1024
"""The largest frame the stream protocol allows (1 MiB of UTF-8)."""


class MalformedFrame(TalkieError):
    """A frame that is not one JSON object of the shape its type calls for."""


class FrameTooLarge(EventTooLarge):
    """A frame over `MAX_FRAME_BYTES`: refused unread."""


@dataclass(frozen=True, slots=True)
class Subscribe:
    """Client → server: deliver the channel's events with `seq > from_seq`, then live ones."""

    channel: str
    key: str
    from_seq: int = 0


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    """Client → server: stop delivering the channel's events."""

    channel: str
    key: str


@dataclass(frozen=True, slots=True)
class Ping:
    """Either way: are you there? (answered with `Pong`)."""


@dataclass(frozen=True, slots=True)
class Pong:
    """Either way: the answer to a `Ping`."""


@dataclass(frozen=True, slots=True)
class Subscribed:
    """Server → client: the subscription stands; `first_seq` is the oldest event still
    buffered (`last_seq + 1` when none is), `last_seq` the newest assigned (0 when none)."""

    channel: str
    key: str
    first_seq: int
    last_seq: int


class EventFrame(NamedTuple):
    """Server → client: one chat event `{type, data}` with its per-key sequence number.

    A named tuple (not a frozen dataclass): one is made per event, and it is cheaper to make.
    """

    channel: str
    key: str
    seq: int
    event: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ErrorFrame:
    """Server → client: something went wrong, about one subscription when `key` is given."""

    code: str
    message: str
    channel: str | None = None
    key: str | None = None


_new_tuple = tuple.__new__

ClientFrame = Subscribe | Unsubscribe | Ping | Pong
ServerFrame = Subscribed | EventFrame | ErrorFrame | Ping | Pong


def _byte_length(data: str | bytes) -> int:
    """The UTF-8 size of a frame, computed only when its length in characters leaves doubt."""
    if isinstance(data, bytes) or len(data) * 4 <= MAX_FRAME_BYTES:
        return len(data)
    if len(data) > MAX_FRAME_BYTES:
        return len(data)  # at least one byte per character: too large either way
    return len(data.encode("utf-8", "surrogatepass"))


def _malformed(reason: str) -> MalformedFrame:
    return MalformedFrame(
        _("The gateway sent a stream frame that cannot be read ({reason}).").format(reason=reason)
    )


def _field(frame: dict[str, Any], name: str, kind: type, frame_type: str) -> Any:
    value = frame.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _malformed(
            _("'{type}' without a valid '{name}'").format(type=frame_type[:40], name=name)
        )
    return value


def _seq(frame: dict[str, Any], name: str, frame_type: str) -> int:
    value: int = _field(frame, name, int, frame_type)
    if value < 0:
        raise _malformed(_("'{type}' with a negative '{name}'").format(type=frame_type, name=name))
    return value


def _decode(data: str) -> Any:
    """The JSON value of a frame (whitespace around it allowed), or MalformedFrame."""
    try:
        # pydantic-core's parser: the same JSON as the standard library's, about twice as fast
        # on the small objects frames are, and with a nesting limit of its own.
        return from_json(data)
    except ValueError:
        raise _malformed(_("not JSON")) from None


def parse_frame(data: str | bytes) -> ServerFrame | None:
    """One frame from the gateway; None for a frame type this client does not know."""
    size = len(data) if len(data) * 4 <= MAX_FRAME_BYTES else _byte_length(data)
    if size > MAX_FRAME_BYTES:
        raise FrameTooLarge(
            _(
                "The gateway sent a stream frame of {size:,} bytes, more than the {limit:,} "
                "the protocol allows; it was refused."
            ).format(size=size, limit=MAX_FRAME_BYTES)
        )
    if isinstance(data, bytes):
        raise _malformed(_("a binary frame"))
    frame = _decode(data)
    if not isinstance(frame, dict):
        raise _malformed(_("not a JSON object"))
    frame_type = frame.get("type")
    if frame_type == "event":
        # The frame nearly every message is: checked inline (`type(...) is int` leaves out
        # bool); anything amiss goes the slow way below, which says what is wrong.
        get = frame.get
        channel, key, seq, event = get("channel"), get("key"), get("seq"), get("event")
        if (
            type(channel) is str
            and type(key) is str
            and type(seq) is int
            and seq >= 0
            and type(event) is dict
        ):
            # The named tuple made in C (its own constructor is a Python function).
            return _new_tuple(EventFrame, (channel, key, seq, event))
    if not isinstance(frame_type, str):
        raise _malformed(_("no 'type'"))
    if frame_type == "event":
        event = _field(frame, "event", dict, frame_type)
        return EventFrame(
            _field(frame, "channel", str, frame_type),
            _field(frame, "key", str, frame_type),
            _seq(frame, "seq", frame_type),
            event,
        )
    if frame_type == "ping":
        return Ping()
    if frame_type == "pong":
        return Pong()
    if frame_type == "subscribed":
        return Subscribed(
            _field(frame, "channel", str, frame_type),
            _field(frame, "key", str, frame_type),
            _seq(frame, "firstSeq", frame_type),
            _seq(frame, "lastSeq", frame_type),
        )
    if frame_type == "error":
        code, message = frame.get("code"), frame.get("message")
        channel, key = frame.get("channel"), frame.get("key")
        return ErrorFrame(
            code if isinstance(code, str) else "error",
            message if isinstance(message, str) else "",
            channel if isinstance(channel, str) else None,
            key if isinstance(key, str) else None,
        )
    return None


def build_frame(frame: ClientFrame) -> str:
    """The JSON text of a frame the client sends."""
    if isinstance(frame, Subscribe):
        body: dict[str, Any] = {
            "type": "subscribe",
            "channel": frame.channel,
            "key": frame.key,
            "fromSeq": frame.from_seq,
        }
    elif isinstance(frame, Unsubscribe):
        body = {"type": "unsubscribe", "channel": frame.channel, "key": frame.key}
    elif isinstance(frame, Ping):
        body = {"type": "ping"}
    else:
        body = {"type": "pong"}
    return json.dumps(body, separators=(",", ":"))
