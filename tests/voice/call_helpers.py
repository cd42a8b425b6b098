"""Shared parts of the voice-call tests: an update recorder and the demo scenario's steps.

The reference server's fake provider hears energy, not words: each utterance it detects takes
the next line of its demo script ("Kdo je Petr Novák?" → a card, "Pošli mu nabídku." → an action
to confirm by voice, "Ano, odeslat." → the decision). A test passes a `Speak` callable that puts
sound into the call's microphone (a tone into a scripted microphone, or espeak-ng speech into
PulseAudio) while the talk key is held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import numpy as np

from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import ActionProposed, CardReceived
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.voice.call import VoiceCall
from talkie_tui.voice.call_updates import AssistantSaid, CallStatus, CallUpdate, ToolFinished
from talkie_tui.voice.sound import SAMPLE_RATE
from tests.helpers import TEST_TOKEN

Speak = Callable[[str], Awaitable[None]]
"""Put the words (or any sound standing for them) into the microphone; return when said."""


def tone(seconds: float = 0.8, level: float = 0.3) -> np.ndarray:
    """A loud 440 Hz tone."""
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (np.sin(2 * np.pi * 440 * t) * level * 32767).astype(np.int16)


class Recorder:
    """Collects a call's updates and lets a test wait for one."""

    def __init__(self) -> None:
        self.updates: list[CallUpdate] = []
        self._changed = asyncio.Event()

    def __call__(self, update: CallUpdate) -> None:
        self.updates.append(update)
        self._changed.set()

    def mark(self) -> int:
        """A point in the updates: `wait_for(..., since=mark)` looks only at later ones."""
        return len(self.updates)

    async def wait_for(
        self, test: Callable[[CallUpdate], bool], timeout: float = 30, since: int = 0
    ) -> Any:
        """The first update (after `since`) that passes `test`."""
        async with asyncio.timeout(timeout):
            seen = since
            while True:
                for update in self.updates[seen:]:
                    if test(update):
                        return update
                seen = len(self.updates)
                self._changed.clear()
                await self._changed.wait()

    async def wait_for_state(self, state: str, since: int = 0, timeout: float = 30) -> Any:
        """The first status update with `state`."""
        return await self.wait_for(
            lambda u: isinstance(u, CallStatus) and u.state == state, timeout, since
        )

    def states(self) -> list[str]:
        """Every state the call went through."""
        return [u.state for u in self.updates if isinstance(u, CallStatus)]


async def talk(call: VoiceCall, speak: Speak, words: str) -> None:
    """Hold the talk key while `words` are said, then let go."""
    call.press()
    await speak(words)
    call.release()


async def until_action(call: VoiceCall, recorder: Recorder, speak: Speak) -> Action:
    """Ask about the customer (a card), then for the offer: the action to confirm by voice."""
    await talk(call, speak, "Kdo je Petr Novák?")
    card = await recorder.wait_for(
        lambda u: isinstance(u, ToolFinished) and any(isinstance(e, CardReceived) for e in u.events)
    )
    assert card.error is None
    # The assistant reads the card out; the next sentence waits until it is done.
    await recorder.wait_for(lambda u: isinstance(u, AssistantSaid), since=recorder.mark())
    await recorder.wait_for_state("listening", since=recorder.mark())
    mark = recorder.mark()
    await talk(call, speak, "Pošli mu nabídku.")
    finished = await recorder.wait_for(
        lambda u: (
            isinstance(u, ToolFinished) and any(isinstance(e, ActionProposed) for e in u.events)
        ),
        since=mark,
    )
    action = next(e.action for e in finished.events if isinstance(e, ActionProposed))
    assert "voice" in action.confirm.methods
    return action


def server_test_endpoint(client: TalkieClient, path: str, **params: str) -> Any:
    """GET a test-mode endpoint of the reference server."""
    answer = httpx.get(
        f"{client.server.origin}/api/talkie/_test/{path}",
        params=params,
        headers={"Authorization": f"Bearer {TEST_TOKEN}"},
    )
    answer.raise_for_status()
    return answer.json()


def decisions(client: TalkieClient, action_id: str) -> list[dict[str, Any]]:
    """The decisions the server recorded for an action (with their method)."""
    return server_test_endpoint(client, "decisions", actionId=action_id)["decisions"]
