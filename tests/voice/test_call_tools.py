"""How a call reports the tools it relays (§10.2), one layer: the server and the provider are stubs.

The end-to-end tool paths (cards, actions, a reused call id) run against the reference server
in `test_call.py` and `tests/ui/test_voice.py`; this covers the answers that server never gives.
"""

from __future__ import annotations

import asyncio
from typing import Any

from talkie_tui.core.errors import TalkieError
from talkie_tui.protocol.talkie.voice_models import VoiceSession, VoiceToolResult
from talkie_tui.voice.call import VoiceCall
from talkie_tui.voice.call_updates import CallUpdate, ToolFinished, ToolStarted
from talkie_tui.voice.memory_audio import RecordingSpeaker, ScriptedMicrophone
from talkie_tui.voice.realtime import FunctionCall

SESSION = VoiceSession.model_validate(
    {
        "voiceSessionId": "vs_1",
        "threadId": "t_1",
        "signaling": {"url": "https://voice.example.com/v1/realtime/calls"},
        "clientSecret": "ek_test",
        "labels": {"send_offer_email": "Preparing the e-mail…"},
    }
)


class StubServer:
    """`voice_tool` answers with `answer` (a result, or an error to raise)."""

    def __init__(self, answer: VoiceToolResult | TalkieError) -> None:
        self.answer = answer

    async def voice_tool(self, *args: Any) -> VoiceToolResult:
        if isinstance(self.answer, TalkieError):
            raise self.answer
        return self.answer


class StubPeer:
    """Records what the call sends to the provider."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, event: dict[str, Any]) -> bool:
        self.sent.append(event)
        return True


async def relay(answer: VoiceToolResult | TalkieError) -> tuple[list[CallUpdate], StubPeer]:
    """One function call through a call whose server gives `answer`."""
    updates: list[CallUpdate] = []
    call = VoiceCall(
        StubServer(answer),  # type: ignore[arg-type]
        microphone=ScriptedMicrophone(),
        speaker=RecordingSpeaker(),
        listener=updates.append,
    )
    peer = StubPeer()
    call.session, call.peer = SESSION, peer  # type: ignore[assignment]
    await call._run_tool(FunctionCall("call_1", "send_offer_email", '{"company": "Alfa"}'))
    await asyncio.sleep(0)
    return updates, peer


def outputs(peer: StubPeer) -> list[str]:
    """The function_call_output texts sent to the provider."""
    return [e["item"]["output"] for e in peer.sent if e["type"] == "conversation.item.create"]


async def test_a_tool_that_failed_on_the_server_is_shown_as_failed() -> None:
    updates, peer = await relay(VoiceToolResult(ok=False, output="The CRM is \x1b[31mdown\x1b[0m."))
    started, finished = updates[0], updates[-1]
    assert isinstance(started, ToolStarted) and started.label == "Preparing the e-mail…"
    assert isinstance(finished, ToolFinished) and finished.error == "The CRM is down."
    assert outputs(peer) == ["The CRM is \x1b[31mdown\x1b[0m."]  # the model gets it unchanged


async def test_a_failure_without_words_still_says_it_failed() -> None:
    updates, _peer = await relay(VoiceToolResult(ok=False, output=""))
    assert isinstance(updates[-1], ToolFinished) and updates[-1].error == "The tool failed."


async def test_a_tool_that_worked_has_no_error() -> None:
    updates, peer = await relay(VoiceToolResult(ok=True, output="Sent."))
    assert isinstance(updates[-1], ToolFinished) and updates[-1].error is None
    assert outputs(peer) == ["Sent."]


async def test_a_server_error_is_shown_and_told_to_the_model() -> None:
    updates, peer = await relay(TalkieError("The tool endpoint is down.", retryable=True))
    assert isinstance(updates[-1], ToolFinished)
    assert updates[-1].error == "The tool endpoint is down."
    assert outputs(peer) == ["Error: The tool endpoint is down."]
