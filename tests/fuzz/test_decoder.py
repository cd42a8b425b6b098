"""Event decoding (`EventDecoder.decode` / `decode_object`) and the chat reducer on arbitrary
JSON-ish events.

Rules (§5, DESIGN): a bad event never ends the stream (no exception, at most a MalformedEvent);
unknown types and CUSTOM names are skipped; every string that reaches the screen is free of
control characters; the reducer folds any sequence of decoded events without failing.
"""

from __future__ import annotations

import json
from typing import Any

import ag_ui.core as agui
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from talkie_tui.backends.talkie.reducer import TalkieConversation as Conversation
from talkie_tui.chat.turns import NoticePart, TextPart, ToolPart
from talkie_tui.protocol.talkie.cards import (
    BadgeBlock,
    Card,
    FieldsBlock,
    FileBlock,
    HeadingBlock,
    LinkBlock,
    ListBlock,
    TextBlock,
)
from talkie_tui.protocol.talkie.events import (
    ActionProposed,
    CardReceived,
    EventDecoder,
    LinkSuggested,
    MalformedEvent,
    StreamTruncated,
    UsageReported,
    event_to_json,
)
from tests.fuzz.kit import FORBIDDEN, fuzz_settings, json_like, nasty_text, scalars, unsafe

pytestmark = pytest.mark.fuzz

KNOWN_TYPES = sorted(t.value for t in agui.EventType)
TALKIE_NAMES = ["talkie.card", "talkie.action", "talkie.open", "talkie.usage", "talkie.other"]
CARD_KEYS = [
    "id",
    "title",
    "subtitle",
    "url",
    "blocks",
    "fallbackText",
    "a11yLabel",
    "type",
    "text",
    "fields",
    "label",
    "items",
    "more",
    "name",
    "mime",
    "size",
    "tone",
    "summary",
    "status",
    "paramsHash",
    "riskLevel",
    "confirm",
    "methods",
    "voice",
    "keyword",
    "usage",
    "used",
    "limit",
    "unit",
    "expiresAt",
]

values = json_like(st.sampled_from(CARD_KEYS))
block_types = st.sampled_from(["heading", "text", "fields", "list", "link", "file", "badge", "x"])


pairs = st.fixed_dictionaries({"label": nasty_text, "value": st.one_of(nasty_text, scalars)})
items = st.fixed_dictionaries(
    {"title": nasty_text}, optional={"subtitle": nasty_text, "url": nasty_text}
)
blocks = st.fixed_dictionaries(
    {"type": block_types},
    optional={
        "text": nasty_text,
        "label": nasty_text,
        "url": nasty_text,
        "name": nasty_text,
        "mime": nasty_text,
        "tone": st.sampled_from(["positive", "??"]),
        "fields": st.lists(pairs, max_size=2),
        "items": st.lists(items, max_size=2),
    },
)
# The value of each talkie.* event, well-formed but hostile; `shaped` mixes their keys.
card_value = st.fixed_dictionaries(
    {"fallbackText": nasty_text},
    optional={
        "title": nasty_text,
        "subtitle": nasty_text,
        "url": nasty_text,
        "a11yLabel": nasty_text,
        "blocks": st.lists(blocks, max_size=3),
    },
)
action_value = st.fixed_dictionaries(
    {
        "id": nasty_text.filter(bool),
        "summary": nasty_text,
        "status": st.sampled_from(["pending", "running", "done"]),
        "paramsHash": nasty_text,
    },
    optional={
        "riskLevel": st.sampled_from(["low", "high", "??"]),
        "confirm": st.fixed_dictionaries(
            {
                "methods": st.just(["button", "voice"]),
                "voice": st.fixed_dictionaries({"keyword": nasty_text}),
            }
        ),
    },
)
open_value = st.fixed_dictionaries({"url": nasty_text}, optional={"label": nasty_text})
usage_value = st.fixed_dictionaries(
    {
        "usage": st.lists(
            st.fixed_dictionaries(
                {"label": nasty_text}, optional={"used": scalars, "unit": nasty_text}
            ),
            max_size=2,
        )
    }
)
talkie_customs = st.one_of(
    *(
        st.fixed_dictionaries({"type": st.just("CUSTOM"), "name": st.just(name), "value": value})
        for name, value in [
            ("talkie.card", card_value),
            ("talkie.action", action_value),
            ("talkie.open", open_value),
            ("talkie.usage", usage_value),
            ("talkie.card", values),
            ("talkie.other", values),
        ]
    )
)
talkie_values = st.one_of(card_value, action_value, open_value, usage_value, values)


def field_values(alias: str, annotation: object) -> st.SearchStrategy[Any]:
    """Values for one field of an AG-UI event: of the right type, hostile inside (ill-typed
    events come from the `values` branch of `events()`)."""
    if alias == "metadata":
        return st.fixed_dictionaries(
            {},
            optional={
                "label": nasty_text,
                "error": nasty_text,
                "ok": st.one_of(st.booleans(), nasty_text),
                "retryable": st.one_of(st.booleans(), nasty_text),
            },
        )
    if alias == "role":
        return st.one_of(st.sampled_from(["assistant", "user", "system", "tool"]), nasty_text)
    if alias == "timestamp":
        return st.one_of(st.integers(), st.floats(allow_nan=False))
    if "str" in str(annotation):
        return nasty_text
    return values


def event_strategy(cls: type[agui.BaseEvent]) -> st.SearchStrategy[dict[str, Any]]:
    """Events of one AG-UI class: its required fields always, its optional ones sometimes."""
    required: dict[str, st.SearchStrategy[Any]] = {
        "type": st.just(cls.model_fields["type"].default.value)
    }
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, field in cls.model_fields.items():
        alias = field.alias or name
        if alias == "type":
            continue
        target = required if field.is_required() else optional
        target[alias] = field_values(alias, field.annotation)
    if cls is agui.CustomEvent:
        required["name"] = st.one_of(st.sampled_from(TALKIE_NAMES), nasty_text)
        required["value"] = talkie_values
    return st.fixed_dictionaries(required, optional=optional)


EVENT_CLASSES = sorted(
    (
        cls
        for cls in vars(agui).values()
        if isinstance(cls, type) and issubclass(cls, agui.BaseEvent) and cls is not agui.BaseEvent
    ),
    key=lambda cls: cls.__name__,
)
# The events whose strings reach the screen come up more often.
SHOWN = [
    agui.CustomEvent,
    agui.TextMessageContentEvent,
    agui.TextMessageChunkEvent,
    agui.ToolCallStartEvent,
    agui.ToolCallEndEvent,
    agui.ToolCallChunkEvent,
    agui.RunErrorEvent,
]
WELL_TYPED = st.one_of([*map(event_strategy, EVENT_CLASSES), *map(event_strategy, SHOWN * 3)])
UNKNOWN = st.fixed_dictionaries({"type": nasty_text}, optional={"delta": nasty_text})


def events() -> st.SearchStrategy[Any]:
    """Events: mostly well-typed AG-UI and talkie.* events with hostile strings, some unknown
    or shapeless."""
    return st.one_of(WELL_TYPED, WELL_TYPED, WELL_TYPED, talkie_customs, UNKNOWN, values)


def card_texts(card: Card) -> list[object]:
    """Every string a CardView shows (the file `mime` is cleaned by the widget itself)."""
    texts: list[object] = [card.title, card.subtitle, card.url, card.fallback_text, card.label]
    for block in card.blocks:
        if isinstance(block, HeadingBlock | TextBlock | BadgeBlock):
            texts.append(block.text)
        elif isinstance(block, FieldsBlock):
            texts += [text for item in block.fields for text in (item.label, item.value)]
        elif isinstance(block, ListBlock):
            texts += [t for item in block.items for t in (item.title, item.subtitle, item.url)]
        elif isinstance(block, LinkBlock):
            texts += [block.label, block.url]
        elif isinstance(block, FileBlock):
            texts += [block.name, block.url]
    return texts


def screen_texts(event: object) -> list[object]:
    """The strings of a decoded event that the TUI or `talkie ask` show."""
    if isinstance(event, agui.TextMessageContentEvent):
        return [event.delta]
    if isinstance(event, agui.ToolCallStartEvent):
        return [event.tool_call_name, (event.metadata or {}).get("label")]
    if isinstance(event, agui.ToolCallEndEvent):
        return [(event.metadata or {}).get("error")]
    if isinstance(event, agui.RunErrorEvent):
        return [event.message, event.code]
    if isinstance(event, CardReceived):
        return card_texts(event.card)
    if isinstance(event, ActionProposed):
        voice = event.action.confirm.voice
        return [event.action.summary, voice.keyword if voice else None]
    if isinstance(event, LinkSuggested):
        return [event.link.url, event.link.label]
    if isinstance(event, UsageReported):
        return [text for meter in event.usage for text in (meter.label, meter.unit)]
    if isinstance(event, StreamTruncated):
        return [event.reason]
    return []  # MalformedEvent: see test_malformed_reasons_are_clean


KINDS = (agui.BaseEvent, CardReceived, ActionProposed, LinkSuggested, UsageReported)


def check(decoded: list[object]) -> None:
    """Every decoded event is of a known kind and shows only clean text."""
    for event in decoded:
        assert isinstance(event, (*KINDS, MalformedEvent)), event
        assert unsafe(*screen_texts(event)) == [], event
        json.loads(event_to_json(event))  # `talkie ask --json` can always print it


@fuzz_settings(150)
@given(objects=st.lists(events(), min_size=1, max_size=4))
def test_any_json_event_decodes_without_failing_and_shows_clean_text(objects: list[Any]) -> None:
    """§5: decode_object never raises; what it yields shows no control character."""
    decoder = EventDecoder()
    decoded = [event for obj in objects for event in decoder.decode_object(obj)]
    decoded += decoder.finish()
    check(decoded)


@fuzz_settings(100)
@given(
    objects=st.lists(events(), min_size=1, max_size=3),
    raw=st.lists(nasty_text, max_size=3),
)
def test_any_data_payload_decodes_without_failing(objects: list[Any], raw: list[str]) -> None:
    """§5: decode() on JSON text, JSON with raw control bytes, or garbage: never raises."""
    decoder = EventDecoder()
    payloads = [json.dumps(obj, ensure_ascii=False) for obj in objects] + raw
    # A sloppy producer writes raw control characters into its JSON strings.
    payloads += [p.replace("\\u001b", "\x1b").replace("\\r", "\r") for p in payloads]
    decoded = [event for data in payloads for event in decoder.decode(data)]
    check([*decoded, *decoder.finish()])


@fuzz_settings(100)
@given(objects=st.lists(events(), min_size=1, max_size=6))
def test_the_reducer_folds_any_event_sequence(objects: list[Any]) -> None:
    """§5/§6/§8: any decoded sequence folds into turns; their texts are clean."""
    decoder = EventDecoder()
    conversation = Conversation()
    conversation.add_user_message("m_user", "hello")
    for obj in [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}, *objects]:
        for event in decoder.decode_object(obj):
            conversation.apply(event)
    conversation.apply(StreamTruncated("cut"))
    for turn in conversation.turns:
        for part in turn.parts:
            if isinstance(part, TextPart):
                assert unsafe(part.text) == []
            elif isinstance(part, ToolPart):
                assert unsafe(part.label, part.error) == []


@fuzz_settings(100)
@given(objects=st.lists(events(), min_size=1, max_size=4))
@example(objects=[{"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "x", "role": "\x1b[2J\x9b"}]}])
def test_malformed_reasons_are_clean(objects: list[Any]) -> None:
    """§5: the warning about an unreadable event shows no control character of the server."""
    conversation = Conversation()
    decoder = EventDecoder()
    for obj in objects:
        for event in decoder.decode_object(obj):
            if isinstance(event, MalformedEvent):
                assert unsafe(event.reason) == [], event
            change = conversation.apply(event)
            if isinstance(change, NoticePart):
                assert not FORBIDDEN.search(change.text)


@fuzz_settings(20)
@given(depth=st.integers(min_value=3000, max_value=20000), kind=st.sampled_from(["[", '{"a":']))
@example(depth=5000, kind="[")
def test_deeply_nested_data_is_a_malformed_event_not_a_crash(depth: int, kind: str) -> None:
    """§5: a payload nested thousands of levels deep is skipped like any unreadable one."""
    close = "]" if kind == "[" else "}"
    data = '{"type": "TEXT_MESSAGE_CONTENT", "x": ' + kind * depth + "1" + close * depth + "}"
    decoded = EventDecoder().decode(data)
    assert all(isinstance(event, MalformedEvent) for event in decoded)
