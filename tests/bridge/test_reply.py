"""A reply's streamed messages against a scripted hub (`reply.Reply`): what the bridge does
when the hub drops a delta (`rate_limited`) or finishes a message early, in the orders a real
hub cannot be made to show on cue: a delta taken after one dropped, a last delta dropped just
before the end, an early finish inside a code block, and the replay of a reply cut short."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from talkie_tui.bridge import reply as reply_module
from talkie_tui.bridge.context import BridgeContext
from talkie_tui.bridge.reply import Reply


@dataclass
class _Message:
    id: str
    text: str = ""
    status: str = "streaming"
    truncated: bool = False

    def form(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "body": {"text": self.text},
            "status": self.status,
            "truncated": self.truncated,
            "stopped": False,
        }


@dataclass
class ScriptedHub:
    """The ops and the one read of the agent API a reply uses, with a hub's bookkeeping:
    `drop` the appends (counted from 0) it refuses as too fast, told at once or, with
    `late`, only after the next append was taken."""

    drop: set[int] = field(default_factory=set)
    late: bool = False
    messages: dict[str, _Message] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    appends: list[str] = field(default_factory=list)
    failed: Callable[[str, str], None] = lambda _message_id, _code: None
    _told: list[tuple[str, str]] = field(default_factory=list)

    def texts(self) -> list[str]:
        return [m.text for m in self.messages.values()]

    async def start_stream(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        key = fields["idempotency_key"]
        if key not in self.keys:
            message = _Message(f"msg_{len(self.messages)}")
            self.messages[message.id] = message
            self.keys[key] = message.id
        return self.messages[self.keys[key]].form()

    async def append(self, message_id: str, text: str) -> bool:
        number = len(self.appends)
        self.appends.append(text)
        message = self.messages[message_id]
        loop = asyncio.get_running_loop()
        if message.status != "streaming":
            loop.call_soon(self.failed, message_id, "not_streaming")
        elif number in self.drop:
            if self.late:
                self._told.append((message_id, "rate_limited"))
            else:
                loop.call_soon(self.failed, message_id, "rate_limited")
        else:
            message.text += text
            for told in self._told:
                loop.call_soon(self.failed, *told)
            self._told.clear()
        return True

    async def finish(self, message_id: str, buttons: Any) -> dict[str, Any]:
        message = self.messages[message_id]
        message.status = "complete"
        return message.form()

    async def send(self, conversation_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("a reply of text sends no whole message")

    async def activity(self, conversation_id: str, state: str, label: str | None = None) -> None:
        return None

    async def wait_ready(self) -> None:
        return None

    async def message_text(self, conversation_id: str, message_id: str) -> str | None:
        return self.messages[message_id].text

    def finish_early(self, message_id: str) -> None:
        """The hub's sweeper finishes a quiet stream."""
        self.messages[message_id].status = "complete"
        self.messages[message_id].truncated = True


class _Bridge:
    def __init__(self, hub: ScriptedHub) -> None:
        self.ops = hub
        self.api = hub
        self.flush_interval = 0.001
        self.tasks: list[asyncio.Task[None]] = []

    def keep(self, task: asyncio.Task[None]) -> None:
        self.tasks.append(task)


def _reply(hub: ScriptedHub, event: str = "evt_1") -> Reply:
    """A reply wired as `Answers.delta_failed` wires the bridge's."""
    made = Reply(cast(BridgeContext, _Bridge(hub)), event, "cnv_1", None)

    def failed(message_id: str, code: str) -> None:
        stream = made.stream
        if stream is None or stream.message_id != message_id:
            return
        if code == "rate_limited":
            stream.refused()
        elif code == "not_streaming":
            stream.done = stream.closed_early = True

    hub.failed = failed
    return made


async def _say(reply: Reply, pieces: list[str], pause: float = 0.01) -> None:
    for piece in pieces:
        await reply.text(piece)
        await asyncio.sleep(pause)  # each piece its own delta
    await reply.close()


WORDS = ["alpha ", "beta ", "gamma ", "delta ", "epsilon"]


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reply_module, "REFUSED_PAUSE", 0.02)


async def test_a_dropped_delta_is_sent_again_after_the_pause() -> None:
    hub = ScriptedHub(drop={1})
    await _say(_reply(hub), WORDS)
    assert hub.texts() == ["".join(WORDS)]
    assert hub.appends[:2] == ["alpha ", "beta "] and hub.appends[2].startswith("beta ")


async def test_a_delta_taken_after_a_dropped_one_ends_the_message_and_goes_on_from_the_gap() -> (
    None
):
    """The hub took "gamma " after it dropped "beta ": its text has a gap that no append can
    mend. The message ends there and a new one repeats the text from the gap: some of it twice,
    none lost."""
    hub = ScriptedHub(drop={1}, late=True)
    await _say(_reply(hub), WORDS)
    assert hub.texts() == ["alpha gamma ", "beta gamma delta epsilon"]
    assert all(m.status == "complete" for m in hub.messages.values())


async def test_a_last_delta_dropped_just_before_the_end_goes_on_in_a_new_message() -> None:
    hub = ScriptedHub(drop={1})
    reply = _reply(hub)
    await reply.text("all at ")
    await asyncio.sleep(0.01)
    await reply.text("once")
    await reply.close()  # the last delta and the end, with nothing between
    assert hub.texts() == ["all at ", "once"]
    # A replay finds the message the hub had complete short of its text, and the one after.
    again = ScriptedHub(messages=hub.messages, keys=hub.keys)
    await _say(_reply(again), ["all at once"])
    assert again.texts() == hub.texts() and again.appends == []


async def test_a_drop_told_after_the_hub_finished_the_message_does_not_hold_up_the_end() -> None:
    hub = ScriptedHub()
    reply = _reply(hub)
    await reply.text("first ")
    await asyncio.sleep(0.01)
    assert reply.stream is not None
    stream = reply.stream
    hub.finish_early(stream.message_id)
    await reply.text("second ")
    await asyncio.sleep(0.01)
    assert stream.closed_early
    stream.refused()
    async with asyncio.timeout(10):  # a wait (the carry-on must not hang), not a measure
        await _say(reply, ["third"])
    assert hub.texts() == ["first ", "second third"]


async def test_an_early_finish_inside_a_code_block_opens_it_again_in_the_next_message() -> None:
    hub = ScriptedHub()
    reply = _reply(hub)
    for line in ["Code:\n\n", "```python\n", "x = 1\n"]:
        await reply.text(line)
        await asyncio.sleep(0.01)
    assert reply.stream is not None
    hub.finish_early(reply.stream.message_id)
    await _say(reply, ["y = 2\n", "```\n", "\nDone.\n"])
    assert hub.texts() == [
        "Code:\n\n```python\nx = 1\n",
        "```python\ny = 2\n```\n\nDone.\n",
    ]
    # A replay of the event (the same text, its own deltas) finds both messages made.
    again = ScriptedHub(messages=hub.messages, keys=hub.keys)
    await _say(_reply(again), ["Code:\n\n```python\nx = 1\ny = 2\n```\n\nDone.\n"])
    assert again.texts() == hub.texts() and again.appends == []


async def test_a_replay_of_a_long_reply_cut_off_sends_only_what_the_hub_lacks() -> None:
    from talkie_tui.bridge.split import split_text
    from talkie_tui.devserver.common.long_answer import long_answer, tokens_of

    text = long_answer(4000, 2)
    hub = ScriptedHub()
    first = _reply(hub)
    tokens = tokens_of(text)
    for token in tokens[:2000]:  # past the first message's end: the second is open
        await first.text(token)
    await asyncio.sleep(0.05)
    first.abandon()  # the bridge is gone
    assert [m.status for m in hub.messages.values()] == ["complete", "streaming"]
    replay = _reply(hub)
    await replay.text(text[:3000])
    await asyncio.sleep(0.01)
    await _say(replay, tokens[750:], pause=0)
    assert hub.texts() == split_text(text)
