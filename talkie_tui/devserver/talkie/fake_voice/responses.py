"""How the fake "model" answers in one call: a response calls the heard line's tool, or speaks.

What it says follows the conversation: a heard line with a tool gets the function call, and the
tool's output (or the line's reply) is said once the client sends it; a line without a tool gets
its reply or an acknowledgement; nothing heard, a greeting. Speech is synthesized and played on
the call's outgoing track, its transcript keeping pace with the audio. A response ends with
`response.done` (with rough `usage`), or is cancelled, which cuts its speech off.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from talkie_tui.devserver.talkie.fake_voice.audio import (
    SAMPLE_RATE,
    OutputTrack,
    Playback,
    synthesize,
)
from talkie_tui.devserver.talkie.fake_voice.conversation import Conversation, ToolCall, new_id
from talkie_tui.devserver.talkie.fake_voice.script import Line
from talkie_tui.devserver.talkie.voice import VoiceGrant

__all__ = ["Responder", "speakable", "words_of"]

# Rough token rates of realtime audio, for `usage` in response.done.
INPUT_AUDIO_TOKENS_PER_SECOND = 10
OUTPUT_AUDIO_TOKENS_PER_SECOND = 20
MAX_SPOKEN_CHARS = 400
ACKNOWLEDGEMENTS = {"cs": "Dobře.", "en": "All right."}
GREETINGS = {"cs": "Dobrý den, s čím vám mohu pomoci?", "en": "Hello, how can I help?"}
WAITING = {
    "cs": "Ještě čekám na výsledek nástroje.",
    "en": "I'm still waiting for the tool's result.",
}
_MARKDOWN = re.compile(r"\*\*|\*|`|_{2,}")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_BULLET = re.compile(r"^\s*(?:[-•]|\d+\.)\s+", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def speakable(text: str, limit: int = MAX_SPOKEN_CHARS) -> str:
    """Markdown turned into plain sentences, cut at a sentence end near `limit` characters."""
    plain = _BULLET.sub("", _MARKDOWN.sub("", _LINK.sub(r"\1", text)))
    plain = re.sub(r"\s+", " ", plain).strip()
    if len(plain) <= limit:
        return plain
    kept = ""
    for sentence in _SENTENCE_END.split(plain):
        if kept and len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    return kept[:limit]


def words_of(text: str) -> list[str]:
    """Transcript deltas: each word with its following space."""
    return re.findall(r"\S+\s*", text) or [text]


@dataclass
class _Response:
    id: str
    task: asyncio.Task[None] | None = None
    playback: Playback | None = None
    output: list[dict[str, Any]] = field(default_factory=list)


class Responder:
    """The responses of one call: at most one active; started, run, cancelled and reported."""

    def __init__(
        self,
        grant: VoiceGrant,
        conversation: Conversation,
        out: OutputTrack,
        *,
        send: Callable[[dict[str, Any]], None],
        error: Callable[..., None],
        spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]],
    ) -> None:
        self.active: _Response | None = None
        """The response in progress, if any."""
        self._grant = grant
        self._conversation = conversation
        self._out = out
        self._send = send
        self._error = error
        self._spawn = spawn
        self._last_id: str | None = None

    def on_create(self, event: dict[str, Any]) -> None:
        """`response.create`: start a response, unless one is active."""
        if self.active is not None:
            self._error(
                "conversation_already_has_active_response",
                f"Conversation already has an active response in progress: {self.active.id}. "
                "Wait until the response is finished before creating a new one.",
                event_id=event.get("event_id"),
            )
            return
        self.start()

    def start(self) -> None:
        """Start a response to what was heard (a tool call or speech)."""
        response = _Response(new_id("resp"))
        self.active = response
        self._last_id = response.id
        # Sent at once, so a cancel arriving right after always finds a created response.
        self._send(
            {
                "type": "response.created",
                "response": {
                    "id": response.id,
                    "object": "realtime.response",
                    "status": "in_progress",
                    "status_details": None,
                    "output": [],
                    "output_modalities": ["audio"],
                    "usage": None,
                },
            }
        )
        response.task = self._spawn(self._run(response))

    def on_cancel(self, event: dict[str, Any]) -> None:
        """`response.cancel`: stop the active response, or say there is none."""
        if not self.cancel("client_cancelled"):
            self._error(
                "response_cancel_not_active",
                "Cancellation failed: no active response found",
                event_id=event.get("event_id"),
            )

    def on_output_clear(self, event: dict[str, Any]) -> None:
        """`output_audio_buffer.clear`: stop the speech; always answered with `cleared`."""
        # Always answered with `cleared`, also when nothing was playing.
        if not self.cancel("client_cancelled", report_clear=True):
            self._out.clear()
            self._send({"type": "output_audio_buffer.cleared", "response_id": self._last_id})

    def cancel(self, reason: str, *, report_clear: bool = False) -> bool:
        """Stop the active response (and its speech); False when there is none."""
        response = self.active
        if response is None:
            return False
        self.active = None
        if response.task is not None:
            response.task.cancel()
        cut = response.playback is not None and self._out.clear()
        if cut or report_clear:
            self._send({"type": "output_audio_buffer.cleared", "response_id": response.id})
        self._send_done(response, "cancelled", reason)
        return True

    async def _run(self, response: _Response) -> None:
        conversation = self._conversation
        line, tool = conversation.heard, conversation.tool
        locale = self._grant.locale
        if line is not None and line.tool and tool is None:
            await self._call_function(response, line)
            return
        if tool is not None and tool.output is None:
            text = WAITING.get(locale, WAITING["en"])
        elif tool is not None:
            assert tool.output is not None
            text = tool.line.reply or speakable(tool.output)
            conversation.heard = conversation.tool = None
        elif line is not None:
            text = line.reply or ACKNOWLEDGEMENTS.get(locale, ACKNOWLEDGEMENTS["en"])
            conversation.heard = None
        else:
            text = GREETINGS.get(locale, GREETINGS["en"])
        await self._speak(response, text)

    async def _call_function(self, response: _Response, line: Line) -> None:
        assert line.tool is not None
        call_id = new_id("call")
        self._conversation.tool = ToolCall(call_id, line)
        arguments = json.dumps(line.arguments, ensure_ascii=False)
        item = {
            "id": new_id("item"),
            "object": "realtime.item",
            "type": "function_call",
            "status": "in_progress",
            "name": line.tool,
            "call_id": call_id,
            "arguments": "",
        }
        where = {"response_id": response.id, "output_index": 0}
        self._send({"type": "response.output_item.added", **where, "item": item})
        self._send(
            {
                "type": "conversation.item.added",
                "previous_item_id": self._conversation.last_item,
                "item": item,
            }
        )
        self._conversation.last_item = item["id"]
        ids = {**where, "item_id": item["id"], "call_id": call_id}
        self._send({"type": "response.function_call_arguments.delta", **ids, "delta": arguments})
        self._send(
            {
                "type": "response.function_call_arguments.done",
                **ids,
                "name": line.tool,
                "arguments": arguments,
            }
        )
        done = {**item, "status": "completed", "arguments": arguments}
        self._send({"type": "conversation.item.done", "item": done})
        self._send({"type": "response.output_item.done", **where, "item": done})
        response.output.append(done)
        self._finish(response)

    async def _speak(self, response: _Response, text: str) -> None:
        item_id = new_id("item")
        item: dict[str, Any] = {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        where = {"response_id": response.id, "output_index": 0}
        part = {**where, "item_id": item_id, "content_index": 0}
        self._send({"type": "response.output_item.added", **where, "item": item})
        self._send(
            {
                "type": "conversation.item.added",
                "previous_item_id": self._conversation.last_item,
                "item": item,
            }
        )
        self._conversation.last_item = item_id
        self._send(
            {
                "type": "response.content_part.added",
                **part,
                "part": {"type": "audio", "transcript": ""},
            }
        )
        pcm = await synthesize(text, self._grant.locale)
        playback = response.playback = self._out.play(pcm)
        self._send({"type": "output_audio_buffer.started", "response_id": response.id})
        # The transcript keeps pace with the audio, as it does with a real model.
        words, said = words_of(text), 0
        while not playback.finished.done():
            await asyncio.wait([playback.finished], timeout=0.1)
            due = min(len(words), int(len(words) * playback.progress + 0.999))
            for word in words[said:due]:
                self._send(
                    {"type": "response.output_audio_transcript.delta", **part, "delta": word}
                )
            said = max(said, due)
        if not playback.finished.result():
            return  # cut off: cancel() reported it
        for word in words[said:]:
            self._send({"type": "response.output_audio_transcript.delta", **part, "delta": word})
        self._send({"type": "response.output_audio.done", **part})
        self._send({"type": "response.output_audio_transcript.done", **part, "transcript": text})
        self._send(
            {
                "type": "response.content_part.done",
                **part,
                "part": {"type": "audio", "transcript": text},
            }
        )
        done = {
            **item,
            "status": "completed",
            "content": [{"type": "output_audio", "transcript": text}],
        }
        self._send({"type": "conversation.item.done", "item": done})
        self._send({"type": "response.output_item.done", **where, "item": done})
        response.output.append(done)
        self._finish(response, spoken_seconds=len(pcm) / SAMPLE_RATE)
        self._send({"type": "output_audio_buffer.stopped", "response_id": response.id})

    def _finish(self, response: _Response, *, spoken_seconds: float = 0.0) -> None:
        if self.active is response:
            self.active = None
        self._send_done(response, "completed", None, spoken_seconds=spoken_seconds)

    def _send_done(
        self,
        response: _Response,
        status: str,
        reason: str | None,
        *,
        spoken_seconds: float = 0.0,
    ) -> None:
        text_tokens = sum(len(json.dumps(item)) for item in response.output) // 4
        input_audio = round(self._conversation.input_seconds * INPUT_AUDIO_TOKENS_PER_SECOND)
        output_audio = round(spoken_seconds * OUTPUT_AUDIO_TOKENS_PER_SECOND)
        usage = {
            "total_tokens": input_audio + text_tokens + output_audio,
            "input_tokens": input_audio,
            "output_tokens": text_tokens + output_audio,
            "input_token_details": {
                "text_tokens": 0,
                "audio_tokens": input_audio,
                "cached_tokens": 0,
            },
            "output_token_details": {"text_tokens": text_tokens, "audio_tokens": output_audio},
        }
        self._conversation.input_seconds = 0.0
        details = None if reason is None else {"type": status, "reason": reason}
        self._send(
            {
                "type": "response.done",
                "response": {
                    "id": response.id,
                    "object": "realtime.response",
                    "status": status,
                    "status_details": details,
                    "output": response.output,
                    "output_modalities": ["audio"],
                    "usage": usage,
                },
            }
        )
