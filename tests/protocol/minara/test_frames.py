"""The stream socket's frames: each known one read, unknown ones skipped, bad ones refused."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from talkie_tui.core.errors import EventTooLarge, TalkieError
from talkie_tui.protocol.minara.frames import (
    MAX_FRAME_BYTES,
    ErrorFrame,
    EventFrame,
    FrameTooLarge,
    MalformedFrame,
    Ping,
    Pong,
    Subscribe,
    Subscribed,
    Unsubscribe,
    build_frame,
    parse_frame,
)
from tests.fuzz.kit import fuzz_settings, json_like


def text(frame: dict[str, Any]) -> str:
    return json.dumps(frame)


def test_an_event_frame_is_read_with_its_seq_and_event() -> None:
    frame = parse_frame(
        text(
            {
                "type": "event",
                "channel": "chat",
                "key": "s1",
                "seq": 7,
                "event": {"type": "text_delta", "data": {"text": "hi"}},
                "extra": "ignored",
            }
        )
    )
    assert frame == EventFrame("chat", "s1", 7, {"type": "text_delta", "data": {"text": "hi"}})


def test_subscribed_ping_pong_and_error_are_read() -> None:
    assert parse_frame(
        text({"type": "subscribed", "channel": "chat", "key": "s", "firstSeq": 3, "lastSeq": 9})
    ) == Subscribed("chat", "s", 3, 9)
    assert parse_frame('{"type":"ping"}') == Ping()
    assert parse_frame('{"type":"pong"}') == Pong()
    assert parse_frame(
        text({"type": "error", "code": "not_found", "message": "no", "key": "s"})
    ) == ErrorFrame("not_found", "no", None, "s")
    assert parse_frame('{"type":"error"}') == ErrorFrame("error", "")


def test_an_unknown_frame_type_is_skipped() -> None:
    assert parse_frame(text({"type": "presence", "who": "x"})) is None


@pytest.mark.parametrize(
    "raw",
    [
        "not json",
        "[1, 2]",
        '"event"',
        "{}",
        '{"type": 5}',
        '{"type": "event", "channel": "chat", "key": "s", "seq": "1", "event": {}}',
        '{"type": "event", "channel": "chat", "key": "s", "seq": true, "event": {}}',
        '{"type": "event", "channel": "chat", "key": "s", "seq": -1, "event": {}}',
        '{"type": "event", "channel": "chat", "key": "s", "seq": 1, "event": []}',
        '{"type": "event", "channel": "chat", "seq": 1, "event": {}}',
        '{"type": "subscribed", "channel": "chat", "key": "s", "firstSeq": 1}',
        b'{"type": "ping"}',
        "[" * 100_000,
    ],
)
def test_a_malformed_frame_raises_a_typed_error(raw: str | bytes) -> None:
    with pytest.raises(MalformedFrame) as caught:
        parse_frame(raw)
    assert isinstance(caught.value, TalkieError)
    assert "cannot be read" in caught.value.message


def test_a_frame_over_one_mib_is_refused_unread() -> None:
    event = {"type": "text_delta", "data": {"text": "x" * MAX_FRAME_BYTES}}
    raw = text({"type": "event", "channel": "chat", "key": "s", "seq": 1, "event": event})
    with pytest.raises(FrameTooLarge) as caught:
        parse_frame(raw)
    assert isinstance(caught.value, EventTooLarge)
    assert "1,048,576" in caught.value.message


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    # 300,000 three-byte characters: 900,000 bytes of text, fine; 400,000: over the limit.
    ok = text(
        {"type": "event", "channel": "c", "key": "k", "seq": 1, "event": {"t": "€" * 300_000}}
    )
    assert isinstance(parse_frame(ok.replace("\\u20ac", "€")), EventFrame)
    big = text(
        {"type": "event", "channel": "c", "key": "k", "seq": 1, "event": {"t": "€" * 400_000}}
    )
    with pytest.raises(FrameTooLarge):
        parse_frame(big.replace("\\u20ac", "€"))


def test_client_frames_are_built_as_the_spec_writes_them() -> None:
    assert json.loads(build_frame(Subscribe("chat", "s1", 4))) == {
        "type": "subscribe",
        "channel": "chat",
        "key": "s1",
        "fromSeq": 4,
    }
    assert json.loads(build_frame(Unsubscribe("chat", "s1"))) == {
        "type": "unsubscribe",
        "channel": "chat",
        "key": "s1",
    }
    assert json.loads(build_frame(Ping())) == {"type": "ping"}
    assert json.loads(build_frame(Pong())) == {"type": "pong"}


@pytest.mark.fuzz
@fuzz_settings(300)
@given(st.one_of(st.text(max_size=200), json_like().map(json.dumps)))
def test_any_text_is_a_frame_none_or_a_malformed_frame(raw: str) -> None:
    with contextlib.suppress(MalformedFrame):
        parse_frame(raw)
