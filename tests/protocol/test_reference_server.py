"""TalkieClient against the reference server (talkie_tui.devserver) in test mode (§11):
status, runs, threads, actions and decisions (§8), cancel, errors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import ag_ui.core as agui
import pytest

from talkie_tui.core.errors import (
    ConflictError,
    ExpiredError,
    NotFoundError,
    StaleError,
    UnauthorizedError,
)
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import ActionProposed, CardReceived, DecodedEvent
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.protocol.talkie.run_request import RunRequest
from tests.helpers import TEST_TOKEN
from tests.protocol.conftest import Connect
from tests.protocol.replay import kinds

# Fast timings; pings every 50 ms so streams carry `: ping` comments between events.
FAST: dict[str, Any] = {
    "test_mode": True,
    "dev_token": TEST_TOKEN,
    "demo_delay": 0.0,
    "slow_seconds": 1.5,
    "ping_interval": 0.05,
}


@pytest.fixture
async def ref(devserver: Callable[..., str], connect: Connect) -> TalkieClient:
    """A client of a fresh reference server with fast timings."""
    return await connect(devserver(**FAST))


async def ask(client: TalkieClient, text: str, **ids: str) -> tuple[RunRequest, list[Any]]:
    request = RunRequest(text, **ids)
    return request, [event async for event in client.run(request)]


def deltas(events: list[DecodedEvent]) -> str:
    return "".join(e.delta for e in events if isinstance(e, agui.TextMessageContentEvent))


async def proposed(client: TalkieClient) -> Action:
    """Run `talkie-test:action` and return the proposed action."""
    _, events = await ask(client, "talkie-test:action")
    (action,) = [e.action for e in events if isinstance(e, ActionProposed)]
    return action


async def test_status(ref: TalkieClient) -> None:
    """§4: status names the signed-in user and whether chat works."""
    status = await ref.status()
    assert status.user.name and status.chat


async def test_a_wrong_token_is_unauthorized(
    devserver: Callable[..., str], connect: Connect
) -> None:
    """§2.2/§3: a token the server does not know gives 401 unauthorized."""
    client = await connect(devserver(**FAST), token="wrong")
    with pytest.raises(UnauthorizedError):
        await client.status()


async def test_echo_run_streams_the_exact_text(ref: TalkieClient) -> None:
    """§11 echo: one text message whose content is exactly the text."""
    request, events = await ask(ref, "talkie-test:echo Příliš žluťoučký kůň [b]úpěl[/b]")

    assert deltas(events) == "Příliš žluťoučký kůň [b]úpěl[/b]"
    assert kinds(events)[0] == "RUN_STARTED" and kinds(events)[-1] == "RUN_FINISHED"
    assert request.finished and request.truncated is None


async def test_card_run(ref: TalkieClient) -> None:
    """§11 card: a tool call that succeeds, a card with a fields block, and text."""
    _, events = await ask(ref, "talkie-test:card")

    end = next(e for e in events if isinstance(e, agui.ToolCallEndEvent))
    assert end.metadata == {"ok": True}
    card = next(e.card for e in events if isinstance(e, CardReceived))
    assert card.fallback_text and any(block.type == "fields" for block in card.blocks)


async def test_error_run(ref: TalkieClient) -> None:
    """§11 error: RUN_ERROR upstream_unavailable, retryable."""
    request, events = await ask(ref, "talkie-test:error")

    assert request.error is not None and request.error.code == "upstream_unavailable"
    assert request.error.metadata == {"retryable": True}
    assert isinstance(events[-1], agui.RunErrorEvent)


async def test_resending_a_stored_message_id_does_not_store_it_twice(ref: TalkieClient) -> None:
    """§5: the server ignores a message id it already stored; the client reuses its ids."""
    first, _ = await ask(ref, "talkie-test:echo once")
    await ask(ref, "talkie-test:echo once", thread_id=first.thread_id, message_id=first.message_id)

    history = await ref.thread(first.thread_id)
    assert [m.id for m in history.messages if m.role == "user"] == [first.message_id]


async def test_threads_list_load_and_delete(ref: TalkieClient) -> None:
    """§9: list (newest first), load with messages, delete, and then it is gone."""
    older, _ = await ask(ref, "talkie-test:echo first thread")
    newer, _ = await ask(ref, "talkie-test:card")

    assert [t.id for t in await ref.threads()][:2] == [newer.thread_id, older.thread_id]
    history = await ref.thread(newer.thread_id)
    assert [m.role for m in history.messages] == ["user", "assistant"]
    assert history.messages[1].cards

    await ref.delete_thread(newer.thread_id)

    assert [t.id for t in await ref.threads()] == [older.thread_id]
    with pytest.raises(NotFoundError):
        await ref.thread(newer.thread_id)


async def test_action_is_authoritative_and_confirm_is_idempotent(ref: TalkieClient) -> None:
    """§8: GET action; confirm → done with result events; the same decision again is 200."""
    action = await proposed(ref)
    assert (await ref.action(action.id)).status == "pending"

    result = await ref.decide(action, "confirm")
    again = await ref.decide(action, "confirm")

    assert result.action.status == "done" and result.events
    assert again.action.status == "done"
    assert (await ref.action(action.id)).status == "done"


@pytest.mark.parametrize(("first", "second"), [("confirm", "cancel"), ("cancel", "confirm")])
async def test_the_opposite_decision_is_a_conflict(
    ref: TalkieClient, first: str, second: str
) -> None:
    """§8: the opposite decision after one was made → 409 conflict."""
    action = await proposed(ref)
    decided = await ref.decide(action, first)  # type: ignore[arg-type]
    assert decided.action.status == ("done" if first == "confirm" else "cancelled")

    with pytest.raises(ConflictError):
        await ref.decide(action, second)  # type: ignore[arg-type]


async def test_a_changed_params_hash_is_stale(ref: TalkieClient) -> None:
    """§8: a decision about parameters other than the current ones → 409 stale."""
    action = await proposed(ref)
    changed = action.model_copy(update={"params_hash": "sha256:" + "0" * 64})

    with pytest.raises(StaleError):
        await ref.decide(changed, "confirm")
    assert (await ref.action(action.id)).status == "pending"


async def test_a_late_decision_is_expired(devserver: Callable[..., str], connect: Connect) -> None:
    """§8: after expiresAt → 410 expired."""
    client = await connect(devserver(**FAST, action_ttl_seconds=0.2))
    action = await proposed(client)
    await asyncio.sleep(0.4)

    with pytest.raises(ExpiredError):
        await client.decide(action, "confirm")
    assert (await client.action(action.id)).status == "expired"


async def test_cancel_run_stops_a_slow_run(ref: TalkieClient) -> None:
    """§5: POST cancelRun stops the run; cancelling an ended run is still ok."""
    request = RunRequest("talkie-test:slow")
    events = []
    async for event in ref.run(request):
        events.append(event)
        if isinstance(event, agui.TextMessageContentEvent) and len(events) < 5:
            await ref.cancel_run(request.run_id)

    finished = events[-1]
    assert isinstance(finished, agui.RunFinishedEvent)
    assert finished.outcome is not None and finished.outcome.type == "cancelled"
    await ref.cancel_run(request.run_id)
