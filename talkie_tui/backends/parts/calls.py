"""Real-time voice calls (`capabilities.voice`): talkie/1's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from talkie_tui.chat.conversation import Change
    from talkie_tui.protocol.talkie.events import DecodedEvent
    from talkie_tui.voice.audio import AudioSink, AudioSource
    from talkie_tui.voice.call import VoiceCall
    from talkie_tui.voice.call_updates import Listener

__all__ = ["Calls", "TakesToolAnswers"]


@runtime_checkable
class Calls(Protocol):
    """A call with the agent of a thread (`capabilities.voice`)."""

    def voice_call(
        self,
        *,
        microphone: AudioSource,
        speaker: AudioSink,
        listener: Listener,
        thread_id: str | None,
        allow_http_signaling: bool = False,
    ) -> VoiceCall:
        """A real-time call in `thread_id`; not yet started."""
        ...


@runtime_checkable
class TakesToolAnswers(Protocol):
    """A conversation that shows what a tool run during a call did (talkie/1's, §10.2)."""

    def add_tool_answer(
        self,
        tool_call_id: str,
        name: str,
        label: str,
        events: list[DecodedEvent],
        *,
        error: str | None = None,
    ) -> list[Change]:
        """A finished assistant turn for the tool: its label with ✓ (or ✗ and `error`), then
        what its events carry."""
        ...
