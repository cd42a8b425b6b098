"""The voice-consent classifier (`voice/consent_classifier.py classify`) and the realtime event
parser (`voice/realtime.py parse_server_event`) on arbitrary input.

Rules (§10.4, DESIGN): classification never fails and stays within its outcomes and reasons;
text over the length cap is never a decision; a question is never a decision; the server's
session words can add words but never turn a built-in refusal into a yes (or a yes into a
cancel). Provider events never raise, and transcripts reach the screen clean.
"""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from talkie_tui.voice import realtime as rt
from talkie_tui.voice.consent_classifier import (
    CONFIRM_WORDS,
    HESITATION_WORDS,
    MAX_CHARS,
    REFUSE_WORDS,
    ConsentWords,
    Reason,
    classify,
)
from tests.fuzz.kit import fuzz_settings, json_like, nasty_text, unsafe

pytestmark = pytest.mark.fuzz

REASONS = set(get_args(Reason))
CONSISTENT = {"confirm": {"confirmed"}, "cancel": {"refusal"}}
WORDS = sorted(CONFIRM_WORDS | REFUSE_WORDS | HESITATION_WORDS)
SPEECH = [*WORDS[::3], "?", ",", ".", "!", "-", "co", "what", "ale", "not", "odeslat", "😀", "-li"]
utterances = st.lists(st.one_of(st.sampled_from(SPEECH), nasty_text), max_size=8).map(" ".join)
wire_words = st.one_of(
    st.lists(st.one_of(st.sampled_from(WORDS), nasty_text, st.integers()), max_size=6),
    json_like(),
)
session_words = st.builds(
    lambda confirm, refuse: ConsentWords.from_wire({"confirm": confirm, "refuse": refuse}),
    wire_words,
    wire_words,
)
keywords = st.one_of(st.none(), st.sampled_from(["odeslat", "send", "", " "]), nasty_text)


@fuzz_settings(200)
@given(text=utterances, keyword=keywords, extra=st.one_of(st.none(), session_words))
@example(text="ano" + " " * MAX_CHARS, keyword=None, extra=None)
def test_classify_never_fails_and_keeps_its_promises(
    text: str, keyword: str | None, extra: ConsentWords | None
) -> None:
    """§10.4: valid, consistent verdicts; over the cap or a question: never a decision."""
    verdict = classify(text, keyword=keyword, extra=extra)
    assert verdict.outcome in ("confirm", "cancel", "neither")
    assert verdict.reason in REASONS
    assert verdict.reason in CONSISTENT.get(verdict.outcome, REASONS - {"confirmed", "refusal"})
    if len(text) > MAX_CHARS:
        assert (verdict.outcome, verdict.reason) == ("neither", "too_long")
    if "?" in text:
        assert verdict.outcome == "neither"
    assert classify(text, keyword=keyword, extra=extra) == verdict  # no hidden state
    padded = (text + " x") * (MAX_CHARS // max(1, len(text) + 2) + 1)
    assert classify(padded, keyword=keyword, extra=extra).outcome == "neither"


@fuzz_settings(100)
@given(
    refuse=st.sampled_from(sorted(REFUSE_WORDS)),
    confirm=st.sampled_from(sorted(CONFIRM_WORDS)),
    extra=session_words,
)
def test_session_words_cannot_turn_no_into_yes(
    refuse: str, confirm: str, extra: ConsentWords
) -> None:
    """§10.1/§10.4: server words never make a built-in no confirm (or a yes cancel)."""
    assert classify(refuse, extra=extra).outcome != "confirm"
    assert classify(confirm, extra=extra).outcome != "cancel"
    assert classify(f"{refuse}, {confirm}", extra=extra).outcome == "neither"


provider_values = json_like()
loose = st.one_of(nasty_text, nasty_text, nasty_text, provider_values)
item = st.fixed_dictionaries(
    {"type": st.sampled_from(["function_call", "message"])},
    optional={"call_id": loose, "name": loose, "arguments": loose, "id": loose},
)
response = st.fixed_dictionaries(
    {},
    optional={
        "id": loose,
        "status": loose,
        "output": st.lists(
            st.fixed_dictionaries(
                {
                    "content": st.lists(
                        st.fixed_dictionaries({"type": st.sampled_from(["audio", "text"])})
                    )
                }
            ),
            max_size=2,
        ),
    },
)
# Each event type with the fields parse_server_event reads (hostile strings, sometimes
# ill-typed), plus arbitrary extra fields.
KEYS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "session.created": {},
    "session.updated": {},
    "input_audio_buffer.speech_started": {"item_id": loose, "audio_start_ms": loose},
    "input_audio_buffer.speech_stopped": {"item_id": loose},
    "input_audio_buffer.committed": {"item_id": loose},
    "input_audio_buffer.cleared": {},
    "conversation.item.input_audio_transcription.completed": {
        "item_id": loose,
        "transcript": loose,
    },
    "response.output_audio_transcript.delta": {"response_id": loose, "delta": loose},
    "response.audio_transcript.delta": {"item_id": loose, "delta": loose},
    "response.output_audio_transcript.done": {"response_id": loose, "transcript": loose},
    "response.audio_transcript.done": {"transcript": loose},
    "response.function_call_arguments.done": {
        "call_id": loose,
        "name": loose,
        "arguments": loose,
        "item_id": loose,
    },
    "response.output_item.done": {"item": st.one_of(item, provider_values)},
    "response.created": {"response": st.one_of(response, provider_values)},
    "response.done": {"response": st.one_of(response, provider_values)},
    "output_audio_buffer.started": {"response_id": loose},
    "output_audio_buffer.stopped": {"response_id": loose},
    "output_audio_buffer.cleared": {"response_id": loose},
    "error": {
        "error": st.one_of(
            st.fixed_dictionaries({}, optional={"message": loose, "code": loose, "type": loose}),
            provider_values,
        )
    },
    "rate_limits.updated": {"rate_limits": provider_values},
}
provider_events = st.one_of(
    *(
        st.fixed_dictionaries({"type": st.just(kind)}, optional={**keys, "extra": provider_values})
        for kind, keys in KEYS.items()
    ),
    provider_values,
)


SHOWN = {
    rt.UserTranscript: ("text",),
    rt.AssistantTranscript: ("text",),
    rt.AssistantTranscriptDelta: ("delta",),
    rt.ProviderError: ("message", "code"),
}


@fuzz_settings(200)
@given(event=provider_events, as_bytes=st.booleans())
def test_provider_events_never_raise_and_transcripts_are_clean(event: Any, as_bytes: bool) -> None:
    """§10: any data-channel message becomes a typed event; what is shown has no controls."""
    text = json.dumps(event, ensure_ascii=False)
    message = text.encode() if as_bytes else text
    parsed = rt.parse_server_event(message)
    assert isinstance(parsed, get_args(rt.RealtimeEvent))
    fields = SHOWN.get(type(parsed), ())
    assert unsafe(*(getattr(parsed, field) for field in fields)) == []


@fuzz_settings(150)
@given(raw=st.one_of(st.binary(max_size=64), nasty_text))
def test_garbage_on_the_data_channel_is_a_provider_error(raw: bytes | str) -> None:
    """§10: bytes or text that are not an event are reported, never raised."""
    parsed = rt.parse_server_event(raw)
    assert isinstance(parsed, get_args(rt.RealtimeEvent))
    if isinstance(parsed, rt.ProviderError):
        assert unsafe(parsed.message, parsed.code) == []


@fuzz_settings(20)
@given(depth=st.integers(min_value=3000, max_value=30000))
@example(depth=5000)
def test_a_deeply_nested_provider_message_is_a_provider_error(depth: int) -> None:
    """§10: a message nested thousands of levels deep (under the size cap) is reported."""
    parsed = rt.parse_server_event('{"type": "error", "error": ' + "[" * depth + "]" * depth + "}")
    assert isinstance(parsed, rt.ProviderError)
