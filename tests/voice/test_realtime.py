"""openai-realtime/1 events: what talkie sends, and how it reads GA and beta server events."""

from __future__ import annotations

import json

import pytest

from talkie_tui.voice import realtime as rt


def test_session_update_changes_turn_detection_only() -> None:
    """§10.1: the client never changes model, instructions or tools."""
    for event in (
        rt.turn_detection_update("push_to_talk"),
        rt.turn_detection_update("server_vad", create_response=False, interrupt_response=False),
    ):
        assert event["type"] == "session.update"
        session = event["session"]
        assert set(session) == {"type", "audio"} and session["type"] == "realtime"
        assert set(session["audio"]) == {"input"}
        assert set(session["audio"]["input"]) == {"turn_detection"}
    assert rt.turn_detection_update("push_to_talk")["session"]["audio"]["input"] == {
        "turn_detection": None
    }
    vad = rt.turn_detection_update("server_vad", create_response=False, interrupt_response=False)
    assert vad["session"]["audio"]["input"]["turn_detection"] == {
        "type": "server_vad",
        "create_response": False,
        "interrupt_response": False,
    }


def test_tool_output_is_relayed_unchanged() -> None:
    output = '{"records": ["Alfa \\u001b"], "note": "<b>raw</b>"}'
    event = rt.function_call_output("call_1", output)
    assert json.loads(rt.encode(event))["item"] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": output,
    }


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"type": "session.created", "session": {}}, rt.SessionReady(updated=False)),
        ({"type": "session.updated"}, rt.SessionReady(updated=True)),
        (
            {"type": "input_audio_buffer.speech_started", "item_id": "i1", "audio_start_ms": 40},
            rt.SpeechStarted("i1", 40),
        ),
        ({"type": "input_audio_buffer.speech_stopped", "item_id": "i1"}, rt.SpeechStopped("i1")),
        ({"type": "input_audio_buffer.committed", "item_id": "i1"}, rt.InputCommitted("i1")),
        ({"type": "input_audio_buffer.cleared"}, rt.InputCleared()),
        (
            {
                "type": "conversation.item.input_audio_transcription.completed",
                "item_id": "i1",
                "transcript": " ano\x1b[2J ",
            },
            rt.UserTranscript("i1", "ano"),
        ),
        (
            {
                "type": "response.output_audio_transcript.delta",
                "response_id": "r1",
                "item_id": "i2",
                "delta": "Dob",
            },
            rt.AssistantTranscriptDelta("r1", "i2", "Dob"),
        ),
        (
            {
                "type": "response.audio_transcript.delta",  # beta name
                "response_id": "r1",
                "item_id": "i2",
                "delta": "ře",
            },
            rt.AssistantTranscriptDelta("r1", "i2", "ře"),
        ),
        (
            {
                "type": "response.audio_transcript.done",  # beta name
                "response_id": "r1",
                "item_id": "i2",
                "transcript": "Dobře.",
            },
            rt.AssistantTranscript("r1", "i2", "Dobře."),
        ),
        (
            {
                "type": "response.function_call_arguments.done",
                "call_id": "c1",
                "name": "search_records",
                "arguments": '{"q":"Alfa"}',
                "item_id": "i3",
            },
            rt.FunctionCall("c1", "search_records", '{"q":"Alfa"}', "i3"),
        ),
        (
            {
                "type": "response.output_item.done",
                "item": {
                    "id": "i3",
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "search_records",
                    "arguments": "{}",
                },
            },
            rt.FunctionCall("c1", "search_records", "{}", "i3"),
        ),
        (
            {"type": "response.output_item.done", "item": {"type": "message"}},
            rt.Ignored("response.output_item.done"),
        ),
        ({"type": "response.created", "response": {"id": "r1"}}, rt.ResponseCreated("r1")),
        (
            {
                "type": "response.done",
                "response": {
                    "id": "r1",
                    "status": "completed",
                    "output": [{"type": "message", "content": [{"type": "output_audio"}]}],
                },
            },
            rt.ResponseDone("r1", "completed", has_audio=True),
        ),
        (
            {
                "type": "response.done",
                "response": {
                    "id": "r2",
                    "status": "completed",
                    "output": [{"type": "function_call"}],
                },
            },
            rt.ResponseDone("r2", "completed", has_audio=False),
        ),
        ({"type": "output_audio_buffer.started", "response_id": "r1"}, rt.OutputAudioStarted("r1")),
        ({"type": "output_audio_buffer.stopped", "response_id": "r1"}, rt.OutputAudioStopped("r1")),
        ({"type": "output_audio_buffer.cleared", "response_id": "r1"}, rt.OutputAudioCleared("r1")),
        (
            {"type": "error", "error": {"type": "invalid_request_error", "message": "no\x07"}},
            rt.ProviderError("no", "invalid_request_error"),
        ),
        ({"type": "rate_limits.updated"}, rt.Ignored("rate_limits.updated")),
    ],
)
def test_server_events_are_typed(message: dict, expected: rt.RealtimeEvent) -> None:
    assert rt.parse_server_event(json.dumps(message)) == expected


@pytest.mark.parametrize(
    "message",
    ["", "not json", "[]", '{"no": "type"}', '{"type": 3}', "x" * (rt.MAX_EVENT_BYTES + 1)],
)
def test_unreadable_events_never_raise(message: str) -> None:
    assert isinstance(rt.parse_server_event(message), rt.ProviderError)


def test_a_tool_call_without_a_name_is_an_error() -> None:
    event = {"type": "response.function_call_arguments.done", "call_id": "c1", "arguments": "{}"}
    assert isinstance(rt.parse_server_event(json.dumps(event)), rt.ProviderError)
