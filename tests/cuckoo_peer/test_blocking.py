"""A person blocks the agent, then adds it again: the peer keeps its own list of conversations
from `conversation.joined` and `conversation.left` (the spec gives no endpoint that lists them),
treats `user_blocked` as final, and finds a block refused (`blocked`) if it writes anyway."""

from __future__ import annotations

from typing import Any

from tests.cuckoo_peer.agent import AgentBackend, echo, is_person_message
from tests.cuckoo_peer.person import error_of


def replied(backend: AgentBackend, text: str) -> bool:
    """Whether the hub confirmed a message of the backend with this text."""
    return any(
        reply.get("ok") and reply["message"]["body"].get("text") == text
        for reply in backend.replies
    )


def conversations_known(backend: AgentBackend) -> set[str]:
    """What a backend may write to: joined and not left since, in the order events came."""
    known: set[str] = set()
    for event in backend.received:
        conversation_id = event["data"].get("conversation", {}).get("id")
        if event["type"] == "conversation.joined":
            known.add(conversation_id)
        elif event["type"] == "conversation.left":
            known.discard(conversation_id)
    return known


async def test_a_blocked_agent_leaves_and_is_added_again(chat_with: Any) -> None:
    chat = await chat_with(echo)
    backend = chat.backend
    person = chat.person
    block_path = f"/v1/client/agents/{chat.agent['id']}/block"

    await person.say(chat.conversation_id, "before")
    await backend.wait_until(lambda: replied(backend, "echo: before"))
    assert chat.conversation_id in conversations_known(backend)

    joins = len(backend.events_of("conversation.joined"))  # the owner's and this person's
    blocked = await person.http.post(block_path)
    assert blocked.status_code == 204, blocked.text
    left = await backend.wait_event(lambda e: e["type"] == "conversation.left")
    assert left["data"] == {
        "conversation": {"id": chat.conversation_id, "kind": "dm"},
        "reason": "user_blocked",
    }
    assert chat.conversation_id not in conversations_known(backend)

    # A backend that writes anyway is refused, over the socket and over HTTP alike.
    reply = await backend.send(chat.conversation_id, "are you there?")
    assert reply["ok"] is False and reply["error"]["code"] == "blocked", reply
    posted = await backend.post_message(chat.conversation_id, text="hello?")
    assert posted.status_code == 403 and error_of(posted)["code"] == "blocked", posted.text
    # Nor can the person write to an agent they blocked.
    said = await person.send(chat.conversation_id, "one more thing")
    assert said.status_code == 403 and error_of(said)["code"] == "blocked", said.text

    unblocked = await person.http.delete(block_path)
    assert unblocked.status_code == 204, unblocked.text
    await backend.wait_until(lambda: len(backend.events_of("conversation.joined")) > joins)
    joined = backend.events_of("conversation.joined")[-1]
    assert joined["data"]["conversation"]["id"] == chat.conversation_id
    assert joined["data"].get("pair_token") is None
    assert chat.conversation_id in conversations_known(backend)

    await person.say(chat.conversation_id, "after")
    await backend.wait_until(lambda: replied(backend, "echo: after"))
    person_texts = [
        e["data"]["message"]["body"]["text"] for e in backend.received if is_person_message(e)
    ]
    assert person_texts == ["before", "after"]
