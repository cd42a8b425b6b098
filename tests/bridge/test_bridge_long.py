"""Long replies through `talkie bridge cuckoo`, end to end (the reference hub, the reference
Talkie server in test mode, the bridge in-process): several messages cut at paragraph breaks,
each valid Markdown by itself, none lost or doubled by a replay; deltas paced for the person's
client; and deltas the hub drops as too fast sent again, not lost."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from talkie_tui.bridge.split import MESSAGE_CHARS, fence_at, split_text
from talkie_tui.core.errors import RateLimitedError
from talkie_tui.devserver.common.long_answer import long_answer
from talkie_tui.devserver.talkie.testmode import code_answer
from tests.bridge.conftest import Agent, Feed, Person, ServedBy, StartBridge
from tests.bridge.test_split import _breaks, _unfenced

pytestmark = pytest.mark.slow


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["body"].get("text", "") for m in messages]


async def _all_of(owner: Person, agent: Agent, answer: str, timeout: float = 30.0) -> list[str]:
    """The agent's messages once all are complete and, without the fence lines the bridge
    added, are the answer."""

    def whole(found: list[dict[str, Any]]) -> bool:
        if not found or any(m["status"] != "complete" for m in found):
            return False
        try:
            return _unfenced(_texts(found), answer)[0] == answer
        except AssertionError:
            return False

    try:
        found = await owner.wait_agent_messages(agent.dm, whole, timeout=timeout)
    except AssertionError:
        texts = _texts(await owner.agent_messages(agent.dm))
        raise AssertionError(f"{len(texts)} messages, {[len(t) for t in texts]}") from None
    assert not any(m["truncated"] for m in found)
    return _texts(found)


def _deltas(feed: Feed, message_id: str) -> list[str]:
    """A message's deltas as the person's client got them, in order."""
    return [
        f["data"]["text"]
        for f in feed.frames
        if f["type"] == "message.delta" and f["data"]["message_id"] == message_id
    ]


def _agent_started(frame: dict[str, Any]) -> bool:
    return (
        frame["type"] == "message.started" and frame["data"]["message"]["sender"]["kind"] == "agent"
    )


async def test_a_long_answer_comes_in_messages_cut_at_paragraph_breaks(
    agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    await start_bridge(agent, **await served_by(agent))
    feed = await owner.feed()
    answer = long_answer(4000, 7)  # 16,000 characters at 2,000 tokens a second: 2 s
    try:
        await owner.say(agent.dm, "talkie-test:markdown 4000 2000 7")
        texts = await _all_of(owner, agent, answer)
        messages = await owner.agent_messages(agent.dm)
    finally:
        await feed.close()
    assert "".join(texts) == answer  # no code block was cut: nothing added
    assert texts == split_text(answer) and len(texts) == 3
    breaks, at = set(_breaks(answer)), 0
    for text in texts[:-1]:
        at += len(text)
        assert at in breaks and fence_at(answer[:at]) is None, text[-80:]
    assert all(len(text) <= MESSAGE_CHARS for text in texts)
    # The person's client got each message as its deltas, in order, paced: the first message
    # (some 5,500 characters, 1,400 tokens, over 0.7 s) in several deltas (about 18 at one
    # every 40 ms), each carrying many tokens. Counted, not timed: a busy machine makes the
    # deltas fewer and larger, never more. Their pace (about 25 a second) is the `delta_gap`
    # figure of benchmarks/bridge_latency.py --prompt 'talkie-test:markdown 4000 2000 7'.
    for message in messages:
        deltas = _deltas(feed, message["id"])
        assert "".join(deltas) == message["body"]["text"]
    first = _deltas(feed, messages[0]["id"])
    assert 5 <= len(first) <= len(texts[0]) // 40, len(first)


async def test_a_message_that_must_end_inside_a_code_block_closes_it_and_the_next_opens_it(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    await start_bridge(agent)
    answer = code_answer(500)  # one fenced block of 18,000 characters
    await owner.say(agent.dm, "talkie-test:code 500")
    texts = await _all_of(owner, agent, answer)
    assert len(texts) == 3 and all(len(text) <= MESSAGE_CHARS for text in texts)
    assert texts[0].startswith("The code, in one block:\n\n```python\n")
    assert texts[0].endswith(")\n```") and texts[1].endswith(")\n```")
    assert texts[1].startswith("```python\ntotal_") and texts[2].startswith("```python\ntotal_")
    assert texts[2].endswith("```\n\nThat is the whole block.\n")
    assert texts == split_text(answer)


async def test_a_long_answer_cut_off_mid_message_is_finished_by_the_replay_once(
    agent: Agent, owner: Person, start_bridge: StartBridge
) -> None:
    """The bridge is killed while the second message of a long answer streams: the hub sends
    the event again to the next bridge, whose run replays the answer; the messages made are
    found again by their idempotency keys, the open one gets only what it lacks."""

    async def never(event: dict[str, Any]) -> None:
        if event["type"] == "message.created":
            await asyncio.Event().wait()  # killed here, the answer not acknowledged

    answer = long_answer(4000, 5)  # 4 s at 1,000 tokens a second
    expected = split_text(answer)
    first = await start_bridge(agent, before_ack=never)
    feed = await owner.feed()
    try:
        await owner.say(agent.dm, "talkie-test:markdown 4000 1000 5")
        await feed.wait(lambda f: _agent_started(f) and sum(map(_agent_started, feed.frames)) >= 2)
        second = [f for f in feed.frames if _agent_started(f)][1]["data"]["message"]["id"]
        await feed.wait(
            lambda f: f["type"] == "message.delta" and f["data"]["message_id"] == second
        )
        await first.stop()
    finally:
        await feed.close()
    cut = await owner.agent_messages(agent.dm)
    assert [m["status"] for m in cut] == ["complete", "streaming"]
    assert cut[0]["body"]["text"] == expected[0]
    assert expected[1].startswith(cut[1]["body"]["text"]) and cut[1]["body"]["text"]
    await start_bridge(agent)
    texts = await _all_of(owner, agent, answer)
    assert texts == expected
    assert [m["id"] for m in (await owner.agent_messages(agent.dm))[:2]] == [c["id"] for c in cut]


@pytest.mark.parametrize("hub_options", [{"delta_rate": (10.0, 5)}])
async def test_deltas_the_hub_drops_as_too_fast_are_sent_again(
    agent: Agent, owner: Person, start_bridge: StartBridge, served_by: ServedBy
) -> None:
    """The hub takes 10 deltas a second (burst 5) from the agent, the bridge sends 25: it is
    told `rate_limited` (over the socket, a frame for the dropped delta; over HTTP, a 429),
    waits, and sends again what the hub lacks: the answer arrives whole, once, without a
    flood of retries."""
    options = await served_by(agent)
    running = await start_bridge(agent, **options)
    bridge = running.bridge
    refused: list[str] = []
    if "webhook" in options:
        append = bridge.api.append

        async def counted(message_id: str, text: str) -> None:
            try:
                await append(message_id, text)
            except RateLimitedError:
                refused.append(message_id)
                raise

        bridge.api.append = counted  # type: ignore[method-assign]
    else:
        failed = bridge.answers.delta_failed

        def counted_failure(message_id: str, code: str) -> None:
            if code == "rate_limited":
                refused.append(message_id)
            failed(message_id, code)

        bridge.answers.delta_failed = counted_failure  # type: ignore[method-assign]
    answer = long_answer(1500, 3)  # 6,000 characters in 1.5 s
    await owner.say(agent.dm, "talkie-test:markdown 1500 1000 3")
    texts = await _all_of(owner, agent, answer)
    assert "".join(texts) == answer
    assert 1 <= len(refused) <= 12, refused
    assert not [w for w in running.warnings if "refused" in w], running.warnings
