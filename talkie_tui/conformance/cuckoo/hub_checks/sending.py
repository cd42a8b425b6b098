"""The hub checks of what an agent sends: messages, streams, buttons, replies, stop, typing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from talkie_tui.conformance.cuckoo.hub import Throwaway, message_event
from talkie_tui.conformance.cuckoo.hub_checks import limits
from talkie_tui.conformance.cuckoo.hub_checks.base import (
    SPEC,
    HubSession,
    append_text,
    check_with_agent,
    expect_error,
    messages_path,
    start_stream,
)
from talkie_tui.conformance.report import CheckFailed, show


@check_with_agent("idempotency", section="Sending a message")
async def idempotency(session: HubSession, made: Throwaway) -> None:
    """A send repeated with its idempotency_key → 200 and the same message, not a second one."""
    hub, path = session.hub, messages_path(made.conversation_id)
    body = {"text": "once", "idempotency_key": uuid.uuid4().hex}
    first = await hub.request("POST", path, made.agent, json_body=body)
    again = await hub.request("POST", path, made.agent, json_body=body)
    rule = (
        f'{SPEC}: "201 when the message is created, 200 when an idempotency_key matched an '
        'earlier send."'
    )
    if first.status != 201 or again.status != 200:
        raise CheckFailed(
            f"the two sends answered HTTP {first.status} and {again.describe()}; {rule}"
        )
    ids = [((a.json() or {}).get("message") or {}).get("id") for a in (first, again)]
    if ids[0] != ids[1]:
        raise CheckFailed(
            f"the repeated send made message {show(ids[1])}, not {show(ids[0])}; {rule}"
        )


@check_with_agent("streaming", section="Streaming")
async def streaming(session: HubSession, made: Throwaway) -> None:
    """A stream starts empty, takes appends, ends complete; a later append → 409 not_streaming."""
    hub, agent = session.hub, made.agent
    refused = await hub.request(
        "POST",
        messages_path(made.conversation_id),
        agent,
        json_body={"stream": True, "text": "early"},
    )
    refused.expect_refused(
        "a stream start with text",
        f'{SPEC}: "A start that carries text, buttons, quick replies or attachments is refused."',
    )
    started = await hub.ok(
        "POST",
        messages_path(made.conversation_id),
        agent,
        "starting a stream",
        json_body={"stream": True},
    )
    message = started["message"]
    if message.get("status") != "streaming":
        raise CheckFailed(
            f"the started stream has status {show(message.get('status'))}, not streaming"
        )
    appended = await append_text(hub, made, message["id"], "Hello")
    if appended.status != 204:
        raise CheckFailed(f"an append answered {appended.describe()}, not 204")
    finished = await hub.ok(
        "POST", f"/v1/agent/messages/{message['id']}/finish", agent, "finishing"
    )
    done = finished["message"]
    if done.get("status") != "complete" or (done.get("body") or {}).get("text") != "Hello":
        raise CheckFailed(f"the finished stream is {show(done, 120)}, not complete with its text")
    late = await append_text(hub, made, message["id"], " again")
    late.expect_refused(
        "an append after the finish",
        f'{SPEC}: "Appending to a stream that is finished or not yours is 409 not_streaming."',
        status=409,
    )
    expect_error(late, 409, "not_streaming", "an append after the finish")


@check_with_agent("buttons", section="Buttons")
async def buttons(session: HubSession, made: Throwaway) -> None:
    """Button rules are enforced, and a tap arrives once as the person's message with its action."""
    hub, path = session.hub, messages_path(made.conversation_id)
    row = [{"id": "a", "label": "A"}]
    bad = {
        "four rows": [row, row, row, row],
        "an id and a url": [[{"id": "a", "label": "A", "url": "https://example.com"}]],
        "a 41-character label": [[{"id": "a", "label": "x" * 41}]],
    }
    rule = (
        f'{SPEC}: "at most three rows, one to three buttons each. Labels are 1 to 40 characters. '
        'A button has an id or a url, never both."'
    )
    for what, rows in bad.items():
        answer = await hub.request(
            "POST", path, made.agent, json_body={"text": "pick", "buttons": rows}
        )
        answer.expect_refused(f"buttons with {what}", rule, status=422)
    sent = await hub.ok(
        "POST",
        path,
        made.agent,
        "sending a button",
        json_body={"text": "pick", "buttons": [[{"id": "yes", "label": "Yes"}]]},
    )
    source = sent["message"]["id"]
    tap = {"action": {"button_id": "yes", "source_message_id": source}}
    first = await made.person_sends(hub, tap)
    if first.status != 201:
        raise CheckFailed(f"the person's tap answered {first.describe()}, not 201")
    async with hub.agent_socket(made.secret) as socket:
        event = await socket.wait_for(
            message_event(made.conversation_id), "the tap's message.created"
        )
        await socket.ack(str(event["id"]))
    body = event["data"]["message"].get("body") or {}
    if body.get("text") != "Yes" or (body.get("action") or {}).get("button_id") != "yes":
        raise CheckFailed(
            f"the tap arrived as {show(body, 120)}; {SPEC}: "
            '"A tap arrives as a message.created from the person, whose text is the button’s '
            'label and whose body.action names the button"'
        )
    second = await made.person_sends(hub, tap)
    second.expect_refused(
        "a second tap of the same button",
        f'{SPEC}: "The original message gains selected_button_id, so a button cannot be taken '
        'twice."',
    )


@check_with_agent("text-clamp", section="Streaming")
async def text_clamp(session: HubSession, made: Throwaway) -> None:
    """A stream's text beyond 8000 characters is clamped and marked truncated."""
    hub, agent = session.hub, made.agent
    message_id = await start_stream(hub, made)
    for _ in range(3):
        await append_text(hub, made, message_id, "x" * 3000)
    finished = (
        await hub.ok("POST", f"/v1/agent/messages/{message_id}/finish", agent, "finishing")
    )["message"]
    text = (finished.get("body") or {}).get("text", "")
    if len(text) != 8000 or finished.get("truncated") is not True:
        raise CheckFailed(
            f"9000 characters streamed finished as {len(text)} characters, truncated "
            f'{show(finished.get("truncated"))}; {SPEC}: "Text beyond 8000 characters is clamped '
            'and also marked truncated."'
        )


@check_with_agent("reply-and-quick-replies", section="Sending a message; Buttons")
async def reply_and_quick_replies(session: HubSession, made: Throwaway) -> None:
    """reply_to quotes the person's message; more than six quick replies → 422."""
    hub, path = session.hub, messages_path(made.conversation_id)
    said = await made.say(hub, "quote me")
    sent = await hub.ok(
        "POST",
        path,
        made.agent,
        "a reply",
        json_body={
            "text": "quoted",
            "reply_to": said["id"],
            "quick_replies": [{"label": "Yes"}, {"label": "No"}],
        },
    )
    reply = sent["message"].get("reply_to") or {}
    if reply.get("id") != said["id"]:
        raise CheckFailed(
            f"a send with reply_to {said['id']} made reply_to {show(reply)}; {SPEC}: "
            '"reply_to": { "id": "msg_…", "sender_kind", "text_preview" }'
        )
    seven = [{"label": f"Option {n}"} for n in range(7)]
    answer = await hub.request(
        "POST", path, made.agent, json_body={"text": "pick", "quick_replies": seven}
    )
    answer.expect_refused(
        "seven quick replies", f'{SPEC}: "Quick replies are up to six plain labels."', status=422
    )
    answer = await made.person_sends(hub, {"text": "hi", "quick_replies": [{"label": "Yes"}]})
    answer.expect_refused(
        "a person's message with quick replies",
        f'{SPEC}: "Only agents may send buttons and quick replies."',
    )


@check_with_agent("stop", section="Streaming (notes/cuckoo.md: stop)")
async def stop(session: HubSession, made: Throwaway) -> None:
    """A person's stop ends the stream as stopped, tells the agent, and refuses later appends."""
    hub = session.hub
    message_id = await start_stream(hub, made)
    await append_text(hub, made, message_id, "Half")
    await hub.ok(
        "POST",
        f"/v1/client/conversations/{made.conversation_id}/stop",
        made.person,
        "stopping",
        json_body={},
    )
    rule = (
        "notes/cuckoo.md: \"The person's POST …/stop finishes the reply where it stands (stopped "
        '+ truncated) and sends the agent stop.requested; later appends get 409 stopped"'
    )
    late = await append_text(hub, made, message_id, " more")
    late.expect_refused("an append after the person's stop", rule, status=409)
    async with hub.agent_socket(made.secret) as socket:
        event = await socket.wait_for(lambda f: f.get("type") == "stop.requested", "stop.requested")
        await socket.ack(str(event["id"]))


@check_with_agent("idle-truncation", section="Streaming", timeout=limits.IDLE + 45.0, slow=True)
async def idle_truncation(session: HubSession, made: Throwaway) -> None:
    """A stream left idle for 30 s is finished by the hub and marked truncated."""
    hub = session.hub
    message_id = await start_stream(hub, made)
    await append_text(hub, made, message_id, "Left hanging")
    path = made.person_messages
    deadline = time.monotonic() + limits.IDLE + max(10.0, limits.IDLE / 2)
    found: dict[str, Any] = {}
    while time.monotonic() < deadline:
        page = await hub.ok("GET", path, made.person, "the person's history")
        found = next((m for m in page["messages"] if m["id"] == message_id), {})
        if found.get("status") == "complete":
            break
        await asyncio.sleep(0.5)
    if found.get("status") != "complete" or found.get("truncated") is not True:
        raise CheckFailed(
            f"the idle stream is {show({k: found.get(k) for k in ('status', 'truncated')})}; "
            f'{SPEC}: "A stream that is idle for 30 seconds is finished by the hub and marked '
            'truncated"'
        )


@check_with_agent("typing", section="Typing")
async def typing(session: HubSession, made: Throwaway) -> None:
    """Typing start and stop → 204; another state → 422."""
    path = f"/v1/agent/conversations/{made.conversation_id}/typing"
    for state in ("start", "stop"):
        answer = await session.hub.request("POST", path, made.agent, json_body={"state": state})
        if answer.status != 204:
            raise CheckFailed(
                f'typing {state} answered {answer.describe()}; {SPEC}: "POST '
                '/conversations/{id}/typing with {"state": "start"} or "stop", which returns 204."'
            )
    answer = await session.hub.request("POST", path, made.agent, json_body={"state": "dancing"})
    if answer.status != 422:
        raise CheckFailed(f"typing with state dancing answered {answer.describe()}, not 422")


TYPING_STATES = {"start": "thinking", "stop": "idle"}  # the newer `activity` frame's words


@check_with_agent("typing-expiry", section="Typing")
async def typing_expiry(session: HubSession, made: Throwaway) -> None:
    """A typing start reaches the person and expires by itself after 10 s; stop hides it."""
    path = f"/v1/agent/conversations/{made.conversation_id}/typing"
    rule = f'{SPEC}: "A start expires by itself after 10 seconds."'

    def activity(state: str) -> Callable[[dict[str, Any]], bool]:
        return lambda frame: (
            frame.get("type") in ("activity", "typing")
            and (frame.get("data") or {}).get("conversation_id") == made.conversation_id
            and (frame.get("data") or {}).get("state") in (state, TYPING_STATES[state])
        )

    async with session.hub.person_socket(made.person) as socket:
        await session.hub.ok("POST", path, made.agent, "typing start", json_body={"state": "start"})
        shown = await socket.wait_for(activity("start"), "typing indicator for the person")
        expires = str((shown.get("data") or {}).get("expires_at"))
        try:
            left = datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp() - time.time()
        except ValueError:
            raise CheckFailed(f"the indicator's expires_at is {show(expires)}; {rule}") from None
        if abs(left - limits.TYPING) > limits.TYPING_SKEW:
            raise CheckFailed(f"the indicator expires {left:.0f} s from now; {rule}")
        await session.hub.ok("POST", path, made.agent, "typing stop", json_body={"state": "stop"})
        await socket.wait_for(activity("stop"), "hidden typing indicator for the person")
