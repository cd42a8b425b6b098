"""The Cuckoo hub checks, in the order they run: each drives the hub from outside, as a person,
an owner and an agent would, and names the rule of `cuckoo-agent.md` it found broken."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from talkie_tui.conformance.cuckoo.hub import Hub, Party, Throwaway, make_throwaway, message_event
from talkie_tui.conformance.cuckoo.receiver import Post, Receiver, webhook_signature
from talkie_tui.conformance.http import error_object
from talkie_tui.conformance.local_server import serve_local
from talkie_tui.conformance.raw_socket import CLOSE, PING, PONG, Frame
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show
from talkie_tui.conformance.suite import Registry
from talkie_tui.conformance.wire import Answer

__all__ = ["CHECKS", "HubSession"]

SPEC = "cuckoo-agent.md"
MIB = 1024 * 1024
LEASE = 30.0  # "not acknowledged within 30 seconds becomes due again"
QUIET = 2.0  # how long an event that must not come again is waited for
WEBHOOK_WAIT = 10.0  # the first post, or its retry "after 1 second"


@dataclass
class HubSession:
    """The hub, the owner and person the checks act as, and the throwaway agents made."""

    hub: Hub
    owner: Party
    person: Party
    made: list[Throwaway] = field(default_factory=list)

    @property
    def dev(self) -> bool:
        """A development hub: anyone may be a fresh person (`X-Dev-User`)."""
        return "X-Dev-User" in self.person.headers

    async def throwaway(self) -> Throwaway:
        """A new agent with a socket binding and a conversation with the person."""
        made = await make_throwaway(self.hub, self.owner, self.person)
        self.made.append(made)
        return made


_REGISTRY: Registry[HubSession] = Registry()
CHECKS = _REGISTRY.checks


def check(
    name: str, *, section: str, timeout: float = 30.0, slow: bool = False
) -> Callable[[Callable[[HubSession], Awaitable[None]]], Callable[[HubSession], Awaitable[None]]]:
    """Register a hub check under `name`; checks run in the order they are defined."""
    return _REGISTRY.check(name, section=f"{SPEC} {section}", timeout=timeout, slow=slow)


ENVELOPE_RULE = (
    f'{SPEC}: "Every failure has the same envelope. {{ "error": {{ "code", "message", "field", '
    '"request_id" }} }}"'
)


def expect_error(answer: Answer, status: int, code: str | None, what: str) -> dict[str, Any]:
    """Require this status, the error envelope, and (when given) this code."""
    if answer.status in (400, 413) and status not in (400, 413):
        raise CheckFailed(
            f'{what}: expected HTTP {status}, got {answer.describe()}; {SPEC}: "There is no 400 '
            'and no 413"'
        )
    error = error_object(answer, status, what, ENVELOPE_RULE)
    if code is not None and error["code"] != code:
        raise CheckFailed(f"{what}: error.code is {show(error['code'])}, not {show(code)}")
    return dict(error)


def _messages(conversation_id: str) -> str:
    return f"/v1/agent/conversations/{conversation_id}/messages"


async def _start_stream(hub: Hub, made: Throwaway) -> str:
    """The agent starts an empty stream; its message id."""
    started = await hub.ok(
        "POST",
        _messages(made.conversation_id),
        made.agent,
        "starting a stream",
        json_body={"stream": True},
    )
    return str(started["message"]["id"])


async def _append(hub: Hub, made: Throwaway, message_id: str, text: str) -> Answer:
    """The agent appends to its stream; the raw answer."""
    path = f"/v1/agent/messages/{message_id}/append"
    return await hub.request("POST", path, made.agent, json_body={"text": text})


# --- credentials and bodies ------------------------------------------------------------------


@check("healthz", section="(notes/cuckoo.md: public routes)")
async def healthz(session: HubSession) -> None:
    """GET /healthz answers 200 without credentials."""
    answer = await session.hub.request("GET", "/healthz")
    if answer.status != 200:
        raise CheckFailed(f"GET /healthz answered {answer.describe()}")


@check("credentials", section="Authentication")
async def credentials(session: HubSession) -> None:
    """The agent API wants the binding secret (else 401), which unlocks /v1/agent only."""
    made = await session.throwaway()
    hub = session.hub
    rule = f'{SPEC}: "401 The credential is missing or wrong"'
    for party, what in (
        (Party("nobody", {}), "without a credential"),
        (Party.agent("bnd_sec_" + "0" * 52), "with a wrong secret"),
    ):
        answer = await hub.request("GET", "/v1/agent/me", party)
        if answer.status != 401:
            raise CheckFailed(f"GET /v1/agent/me {what} answered {answer.describe()}; {rule}")
        expect_error(answer, 401, None, f"GET /v1/agent/me {what}")
    me = await hub.ok("GET", "/v1/agent/me", made.agent, "GET /v1/agent/me with the secret")
    if not isinstance(me, dict) or (me.get("agent") or {}).get("id") != made.agent_id:
        raise CheckFailed(f"GET /v1/agent/me answered {show(me)}, not this binding's agent")
    answer = await hub.request("GET", "/v1/client/me", made.agent)
    if answer.status not in (401, 403):
        raise CheckFailed(
            f"GET /v1/client/me with a binding secret answered {answer.describe()}; {SPEC}: "
            '"bnd_sec_ — A running backend — /v1/agent only"'
        )


@check("json-only", section="Authentication")
async def json_only(session: HubSession) -> None:
    """A body that is not JSON → 422, never 400."""
    made = await session.throwaway()
    answer = await session.hub.request(
        "POST",
        _messages(made.conversation_id),
        made.agent,
        content=b"text=hello",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    if answer.status == 201:
        raise CheckFailed(
            f'a form-encoded send was accepted; {SPEC}: "Request bodies must be JSON."'
        )
    expect_error(answer, 422, None, "a form-encoded send")


@check("unknown-fields", section="Authentication")
async def unknown_fields(session: HubSession) -> None:
    """A body with an unknown field → 422 unknown_field naming it."""
    made = await session.throwaway()
    answer = await session.hub.request(
        "POST", _messages(made.conversation_id), made.agent, json_body={"text": "hi", "txet": "hi"}
    )
    rule = (
        f'{SPEC}: "Unknown fields are rejected, so a typo in a field name is an error rather '
        'than a silent no-op."'
    )
    if answer.status < 400:
        raise CheckFailed(
            f"a send with the unknown field txet answered {answer.describe()}; {rule}"
        )
    error = expect_error(answer, 422, "unknown_field", "a send with the unknown field txet")
    if error.get("field") != "txet":
        raise CheckFailed(
            f'error.field is {show(error.get("field"))}, not "txet" (the field at fault)'
        )


@check("body-cap", section="Authentication; Errors")
async def body_cap(session: HubSession) -> None:
    """A body over 1 MiB → 422 body_too_large (there is no 413)."""
    made = await session.throwaway()
    body = b'{"text": "' + b"a" * (MIB + 16) + b'"}'
    answer = await session.hub.request(
        "POST",
        _messages(made.conversation_id),
        made.agent,
        content=body,
        headers={"Content-Type": "application/json"},
    )
    if answer.status < 400:
        raise CheckFailed(
            f'a body over 1 MiB answered {answer.describe()}; {SPEC}: "Bodies are capped at 1 MiB."'
        )
    expect_error(answer, 422, "body_too_large", "a body over 1 MiB")


@check("error-envelope", section="Errors")
async def error_envelope(session: HubSession) -> None:
    """An unknown conversation → 404 in the error envelope with a request_id."""
    made = await session.throwaway()
    unknown = "cnv_" + "0" * 26
    answer = await session.hub.request("GET", f"/v1/agent/conversations/{unknown}", made.agent)
    error = expect_error(answer, 404, None, "an unknown conversation")
    if not isinstance(error.get("request_id"), str) or not error["request_id"]:
        raise CheckFailed(f"the error has no request_id; {ENVELOPE_RULE}")


# --- the socket ------------------------------------------------------------------------------


@check("socket-push", section="The socket; Events")
async def socket_push(session: HubSession) -> None:
    """What was sent while the agent was away is pushed on connect, in the event envelope."""
    made = await session.throwaway()
    text = f"hello {uuid.uuid4().hex[:8]}"
    await made.say(session.hub, text)
    async with session.hub.agent_socket(made.secret) as socket:
        event = await socket.wait_for(message_event(made.conversation_id, text), "message.created")
        await socket.ack(str(event.get("id")))
    missing = [
        name for name in ("id", "type", "created_at", "agent_id", "data") if name not in event
    ]
    if missing or not str(event.get("id", "")).startswith("evt_"):
        raise CheckFailed(
            f'the event lacks {", ".join(missing) or "an evt_ id"}; {SPEC}: "Every event has the '
            'same envelope. { "id": "evt_…", "type", "created_at", "agent_id", "data" }"'
        )
    if event["agent_id"] != made.agent_id:
        raise CheckFailed(f"the event's agent_id is {show(event['agent_id'])}, not the agent's")


@check("ack", section="Acknowledging")
async def ack(session: HubSession) -> None:
    """An acknowledged event is not pushed again after a reconnect; an unacknowledged one is."""
    made = await session.throwaway()
    await made.say(session.hub, "first")
    await made.say(session.hub, "second")
    async with session.hub.agent_socket(made.secret) as socket:
        first = await socket.wait_for(
            message_event(made.conversation_id, "first"), "the first message"
        )
        await socket.wait_for(message_event(made.conversation_id, "second"), "the second message")
        await socket.ack(str(first["id"]))
        await socket.quiet(lambda frame: False, 0.5)  # the ack is on its way before the close
    async with session.hub.agent_socket(made.secret) as socket:
        again = await socket.quiet(message_event(made.conversation_id), QUIET + 3)
    if again is None:
        raise CheckFailed(
            f'the unacknowledged event was not pushed on reconnect; {SPEC}: "events start arriving '
            'as JSON text frames straight away, including anything you missed while away"'
        )
    if again.get("id") == first["id"]:
        raise CheckFailed(
            "the acknowledged event came again after a reconnect; "
            f'{SPEC}: "Acknowledge it once you have handled it. {{ "ack": "evt_..." }}"'
        )


@check("redelivery", section="Acknowledging", timeout=LEASE + 30.0, slow=True)
async def redelivery(session: HubSession) -> None:
    """An event not acknowledged within 30 s is sent again on the same socket."""
    made = await session.throwaway()
    text = f"redeliver {uuid.uuid4().hex[:8]}"
    async with session.hub.agent_socket(made.secret) as socket:
        await made.say(session.hub, text)
        first = await socket.wait_for(message_event(made.conversation_id, text), "the message")
        wait = LEASE + max(5.0, LEASE / 2)  # the hub's sweeper may come a little after the lease
        again = await socket.quiet(lambda f: f.get("id") == first["id"], wait)
        if again is not None:
            await socket.ack(str(again["id"]))
    if again is None:
        raise CheckFailed(
            f'the unacknowledged event was not sent again within {wait:g} s; {SPEC}: "An '
            'event that is not acknowledged within 30 seconds becomes due again and is sent again"'
        )


@check("one-socket", section="The socket")
async def one_socket(session: HubSession) -> None:
    """A second socket of the same agent closes the first with 4001."""
    made = await session.throwaway()
    hub = session.hub
    rule = (
        f'{SPEC}: "Only one socket wins per agent. When a second connects, the older one is '
        'closed with code 4001."'
    )
    async with hub.agent_socket(made.secret) as older, hub.agent_socket(made.secret):
        try:
            code = await older.closed(wait=5.0)
        except CheckFailed as failure:
            raise CheckFailed(f"{failure} after a second socket connected; {rule}") from None
    if code != 4001:
        raise CheckFailed(f"the older socket closed with {code}; {rule}")


# --- sending ---------------------------------------------------------------------------------


@check("idempotency", section="Sending a message")
async def idempotency(session: HubSession) -> None:
    """A send repeated with its idempotency_key → 200 and the same message, not a second one."""
    made = await session.throwaway()
    hub, path = session.hub, _messages(made.conversation_id)
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


@check("streaming", section="Streaming")
async def streaming(session: HubSession) -> None:
    """A stream starts empty, takes appends, ends complete; a later append → 409 not_streaming."""
    made = await session.throwaway()
    hub, agent = session.hub, made.agent
    refused = await hub.request(
        "POST", _messages(made.conversation_id), agent, json_body={"stream": True, "text": "early"}
    )
    if refused.status < 400:
        raise CheckFailed(
            f"a stream start with text answered {refused.describe()}; "
            f'{SPEC}: "A start that carries text, buttons, quick replies or attachments is '
            'refused."'
        )
    started = await hub.ok(
        "POST",
        _messages(made.conversation_id),
        agent,
        "starting a stream",
        json_body={"stream": True},
    )
    message = started["message"]
    if message.get("status") != "streaming":
        raise CheckFailed(
            f"the started stream has status {show(message.get('status'))}, not streaming"
        )
    appended = await _append(hub, made, message["id"], "Hello")
    if appended.status != 204:
        raise CheckFailed(f"an append answered {appended.describe()}, not 204")
    finished = await hub.ok(
        "POST", f"/v1/agent/messages/{message['id']}/finish", agent, "finishing"
    )
    done = finished["message"]
    if done.get("status") != "complete" or (done.get("body") or {}).get("text") != "Hello":
        raise CheckFailed(f"the finished stream is {show(done, 120)}, not complete with its text")
    late = await _append(hub, made, message["id"], " again")
    if late.status != 409:
        raise CheckFailed(
            f"an append after the finish answered {late.describe()}; "
            f'{SPEC}: "Appending to a stream that is finished or not yours is 409 not_streaming."'
        )
    expect_error(late, 409, "not_streaming", "an append after the finish")


@check("buttons", section="Buttons")
async def buttons(session: HubSession) -> None:
    """Button rules are enforced, and a tap arrives once as the person's message with its action."""
    made = await session.throwaway()
    hub, path = session.hub, _messages(made.conversation_id)
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
        if answer.status != 422:
            raise CheckFailed(f"buttons with {what} answered {answer.describe()}; {rule}")
    sent = await hub.ok(
        "POST",
        path,
        made.agent,
        "sending a button",
        json_body={"text": "pick", "buttons": [[{"id": "yes", "label": "Yes"}]]},
    )
    source = sent["message"]["id"]
    tap = {
        "action": {"button_id": "yes", "source_message_id": source},
        "idempotency_key": uuid.uuid4().hex,
    }
    person_path = f"/v1/client/conversations/{made.conversation_id}/messages"
    first = await hub.request("POST", person_path, made.person, json_body=tap)
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
    second = await hub.request(
        "POST", person_path, made.person, json_body={**tap, "idempotency_key": uuid.uuid4().hex}
    )
    if second.status < 400:
        raise CheckFailed(
            f'a second tap of the same button answered {second.describe()}; {SPEC}: "The original '
            'message gains selected_button_id, so a button cannot be taken twice."'
        )


@check("events-catch-up", section="Catching up over HTTP")
async def events_catch_up(session: HubSession) -> None:
    """GET /v1/agent/events?since= returns the later events, oldest first."""
    made = await session.throwaway()
    for text in ("one", "two", "three"):
        await made.say(session.hub, text)
    everything = await session.hub.ok("GET", "/v1/agent/events", made.agent, "GET /v1/agent/events")
    events = everything.get("events") if isinstance(everything, dict) else None
    if not isinstance(events, list) or len(events) < 3:
        raise CheckFailed(f"GET /v1/agent/events answered {show(everything, 120)}")
    texts = [
        ((e.get("data") or {}).get("message") or {}).get("body", {}).get("text")
        for e in events
        if e.get("type") == "message.created"
    ]
    if texts[-3:] != ["one", "two", "three"]:
        raise CheckFailed(
            f'the events come as {show(texts)}; {SPEC}: "returns events in order, oldest first"'
        )
    since = events[0]["id"]
    later = await session.hub.ok(
        "GET",
        "/v1/agent/events",
        made.agent,
        "GET /v1/agent/events?since=",
        params={"since": since},
    )
    ids = [e.get("id") for e in later.get("events", [])]
    if ids != [e["id"] for e in events[1:]]:
        raise CheckFailed(f"?since={since} answered {show(ids)}, not the events after it")


@check("replaced-binding", section="The socket")
async def replaced_binding(session: HubSession) -> None:
    """Replacing the binding closes the open socket with 4002."""
    made = await session.throwaway()
    hub = session.hub
    async with hub.agent_socket(made.secret) as socket:
        await hub.ok(
            "POST",
            f"/v1/mgmt/agents/{made.agent_id}/binding",
            made.owner,
            "replacing the binding",
            json_body={"mode": "socket"},
        )
        try:
            code = await socket.closed(wait=5.0)
        except CheckFailed:
            code = None
    if code != 4002:
        what = f"closed with {code}" if code else "stayed open"
        raise CheckFailed(
            f"after the binding was replaced the socket {what}; "
            f'{SPEC}: "A binding that is revoked or replaced closes with 4002."'
        )


@check("text-clamp", section="Streaming")
async def text_clamp(session: HubSession) -> None:
    """A stream's text beyond 8000 characters is clamped and marked truncated."""
    made = await session.throwaway()
    hub, agent = session.hub, made.agent
    message_id = await _start_stream(hub, made)
    for _ in range(3):
        await _append(hub, made, message_id, "x" * 3000)
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


@check("reply-and-quick-replies", section="Sending a message; Buttons")
async def reply_and_quick_replies(session: HubSession) -> None:
    """reply_to quotes the person's message; more than six quick replies → 422."""
    made = await session.throwaway()
    hub, path = session.hub, _messages(made.conversation_id)
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
    if answer.status != 422:
        raise CheckFailed(
            f'seven quick replies answered {answer.describe()}; {SPEC}: "Quick replies are up to '
            'six plain labels."'
        )
    answer = await hub.request(
        "POST",
        f"/v1/client/conversations/{made.conversation_id}/messages",
        made.person,
        json_body={
            "text": "hi",
            "quick_replies": [{"label": "Yes"}],
            "idempotency_key": uuid.uuid4().hex,
        },
    )
    if answer.status < 400:
        raise CheckFailed(
            f"a person's message with quick replies answered {answer.describe()}; {SPEC}: \"Only "
            'agents may send buttons and quick replies."'
        )


@check("typing", section="Typing")
async def typing(session: HubSession) -> None:
    """Typing start and stop → 204; another state → 422."""
    made = await session.throwaway()
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


# --- webhooks --------------------------------------------------------------------------------

WEBHOOK_HEADERS = (
    "x-cuckoo-event",
    "x-cuckoo-event-id",
    "x-cuckoo-timestamp",
    "x-cuckoo-signature",
)
CLOCK_SKEW = 300.0


async def _webhook_posts(
    session: HubSession, receiver: Receiver, *, wanted: int = 1, wait: float = WEBHOOK_WAIT
) -> tuple[Throwaway, list[Post]]:
    """A throwaway agent on a webhook binding to `receiver`, a person's message, and the posts
    the hub made (at least `wanted` of one event, within the wait)."""
    async with serve_local(receiver.app()) as origin:
        try:
            made = await make_throwaway(
                session.hub,
                session.owner,
                session.person,
                mode="webhook",
                webhook_url=f"{origin}/hook",
            )
        except CheckFailed as failure:
            raise CheckSkipped(
                f"the hub refused a webhook binding to 127.0.0.1 ({failure}); a production hub "
                "wants a public https address"
            ) from None
        session.made.append(made)
        await made.say(session.hub, f"webhook {uuid.uuid4().hex[:8]}")
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            # The first event posted, posted `wanted` times (a retry, after a redirect).
            first = receiver.posts[0].headers.get("x-cuckoo-event-id", "") if receiver.posts else ""
            if first and len(receiver.of(first)) >= wanted:
                break
            await asyncio.sleep(0.1)
        return made, list(receiver.posts)


@check("webhook-signing", section="Webhook transport")
async def webhook_signing(session: HubSession) -> None:
    """Each webhook post carries the four headers and the HMAC of timestamp and body."""
    made, posts = await _webhook_posts(session, Receiver())
    if not posts:
        raise CheckFailed(f"the hub posted nothing to the webhook within {WEBHOOK_WAIT:g} s")
    for post in posts:
        missing = [name for name in WEBHOOK_HEADERS if not post.headers.get(name)]
        if missing:
            raise CheckFailed(
                f'a webhook post lacks {", ".join(missing)}; {SPEC}: "X-Cuckoo-Event, '
                'X-Cuckoo-Event-Id, X-Cuckoo-Timestamp, X-Cuckoo-Signature"'
            )
        event = json.loads(post.body)
        if (event.get("type"), event.get("id")) != (
            post.headers["x-cuckoo-event"],
            post.headers["x-cuckoo-event-id"],
        ):
            raise CheckFailed("X-Cuckoo-Event and X-Cuckoo-Event-Id do not name the posted event")
        timestamp = post.headers["x-cuckoo-timestamp"]
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > CLOCK_SKEW:
            raise CheckFailed(f"X-Cuckoo-Timestamp is {show(timestamp)}, not the seconds of now")
        if post.headers["x-cuckoo-signature"] != webhook_signature(
            made.secret, timestamp, post.body
        ):
            raise CheckFailed(
                f'X-Cuckoo-Signature does not verify; {SPEC}: "The signature is HMAC-SHA256 over '
                'timestamp + "." + body. The key is the SHA-256 of your binding secret"'
            )


@check("webhook-redirects", section="Webhook transport; Delivery")
async def webhook_redirects(session: HubSession) -> None:
    """A redirect is not followed: it counts as a failure, and the post comes again."""
    receiver = Receiver(redirect_first=True)
    await _webhook_posts(session, receiver, wanted=2)
    rule = (
        f'{SPEC}: "Redirects are not followed and count as a failure." … "A failed delivery is '
        'retried after 1 second"'
    )
    if receiver.elsewhere:
        raise CheckFailed(f"the hub followed a 307 to /elsewhere; {rule}")
    if not receiver.posts:
        raise CheckFailed(f"the hub posted nothing to the webhook within {WEBHOOK_WAIT:g} s")
    first = receiver.posts[0].headers.get("x-cuckoo-event-id", "")
    if len(receiver.of(first)) < 2:
        raise CheckFailed(
            f"the redirected post of {first} did not come again within {WEBHOOK_WAIT:g} s; {rule}"
        )


# --- scopes, frames, stop, media -------------------------------------------------------------

FRAME_CAP = 64 * 1024
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f"
    b"\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00"
    b"\x00IEND\xaeB`\x82"
)


@check("scopes", section="Authentication")
async def scopes(session: HubSession) -> None:
    """An API key (mgt_tok_) unlocks /v1/mgmt only, not /v1/client."""
    hub = session.hub
    made = await hub.request(
        "POST", "/v1/client/api-keys", session.owner, json_body={"name": "conformance"}
    )
    data = made.json()
    if (
        made.status not in (200, 201)
        or not isinstance(data, dict)
        or not str(data.get("key", "")).startswith("mgt_tok_")
    ):
        raise CheckSkipped(
            f"no API key to try (POST /v1/client/api-keys answered {made.describe()})"
        )
    key = Party("api key", {"Authorization": f"Bearer {data['key']}"})
    rule = f'{SPEC}: "mgt_tok_ — A server, as an API key — /v1/mgmt only"'
    listed = await hub.request("GET", "/v1/mgmt/agents", key)
    if listed.status != 200:
        raise CheckFailed(
            f"GET /v1/mgmt/agents with an API key answered {listed.describe()}; {rule}"
        )
    me = await hub.request("GET", "/v1/client/me", key)
    if me.status not in (401, 403):
        raise CheckFailed(f"GET /v1/client/me with an API key answered {me.describe()}; {rule}")
    key_id = (data.get("api_key") or {}).get("id")
    if key_id:
        await hub.request("DELETE", f"/v1/client/api-keys/{key_id}", session.owner)


@check("frame-cap", section="The socket")
async def frame_cap(session: HubSession) -> None:
    """A socket frame over 64 KiB is not taken: the hub closes the socket."""
    made = await session.throwaway()
    async with session.hub.agent_socket(made.secret) as socket:
        frame = {
            "op": "send",
            "cid": "big",
            "conversation_id": made.conversation_id,
            "text": "x" * (FRAME_CAP + 1024),
        }
        await socket.send(frame)
        try:
            code = await socket.closed(wait=5.0)
        except CheckFailed:
            code = None
    if code is None:
        raise CheckFailed(
            f'a frame of {FRAME_CAP // 1024 + 1} KiB left the socket open; {SPEC}: "Frames are '
            'capped at 64 KiB."'
        )


PING_INTERVAL = 30.0  # "The server pings every 30 seconds
PONG_WAIT = 15.0  # and expects an answer within 15."
PING_SLACK = 5.0  # the hub's timers, the network and ours
PING_RULE = f'{SPEC}: "The server pings every 30 seconds and expects an answer within 15."'


def _closed(frame: Frame) -> str:
    """How the hub ended the socket, for a reason."""
    return f"code {frame.close_code}" if frame.close_code is not None else "no close code"


@check(
    "socket-pings",
    section="The socket",
    timeout=2 * (PING_INTERVAL + PING_SLACK) + 15.0,
    slow=True,
)
async def socket_pings(session: HubSession) -> None:
    """The hub pings the agent's socket every 30 s, and an answered ping keeps it open."""
    made = await session.throwaway()
    wait = PING_INTERVAL + PING_SLACK
    async with session.hub.raw_agent_socket(made.secret) as socket:
        for since in ("connecting", "answering the first ping"):
            ping = await socket.next_of({PING}, wait)
            if ping is None:
                raise CheckFailed(f"no ping came within {wait:g} s of {since}; {PING_RULE}")
            if ping.opcode == CLOSE:
                raise CheckFailed(
                    f"the hub closed the socket ({_closed(ping)}) within {wait:g} s of {since}, "
                    f"before a ping; {PING_RULE}"
                )
            await socket.send(PONG, ping.payload)


@check(
    "socket-ping-timeout",
    section="The socket",
    timeout=PING_INTERVAL + PONG_WAIT + PING_SLACK + 15.0,
    slow=True,
)
async def socket_ping_timeout(session: HubSession) -> None:
    """A socket that never answers the hub's pings is closed within 30 + 15 s."""
    made = await session.throwaway()
    wait = PING_INTERVAL + PONG_WAIT + PING_SLACK
    deadline = time.monotonic() + wait
    pings = 0
    async with session.hub.raw_agent_socket(made.secret) as socket:
        while (left := deadline - time.monotonic()) > 0:
            frame = await socket.next_of({PING}, left)
            if frame is None:
                break
            if frame.opcode == PING:
                pings += 1
            elif pings:
                return  # closed, its pings unanswered
            else:
                raise CheckFailed(
                    f"the hub closed the socket ({_closed(frame)}) before any ping; {PING_RULE}"
                )
    if pings == 0:
        raise CheckFailed(
            f"no ping came within {wait:g} s, and the socket stayed open; {PING_RULE}"
        )
    unanswered = "1 ping" if pings == 1 else f"{pings} pings"
    raise CheckFailed(
        f"the socket stayed open for {wait:g} s though {unanswered} went unanswered; {PING_RULE}"
    )


@check("stop", section="Streaming (notes/cuckoo.md: stop)")
async def stop(session: HubSession) -> None:
    """A person's stop ends the stream as stopped, tells the agent, and refuses later appends."""
    made = await session.throwaway()
    hub = session.hub
    message_id = await _start_stream(hub, made)
    await _append(hub, made, message_id, "Half")
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
    late = await _append(hub, made, message_id, " more")
    if late.status != 409:
        raise CheckFailed(f"an append after the person's stop answered {late.describe()}; {rule}")
    async with hub.agent_socket(made.secret) as socket:
        event = await socket.wait_for(lambda f: f.get("type") == "stop.requested", "stop.requested")
        await socket.ack(str(event["id"]))


@check("media-kind", section="Media")
async def media_kind(session: HubSession) -> None:
    """An upload's kind is decided from its bytes, not its name."""
    made = await session.throwaway()
    answer = await _upload(session, made, PNG, "notes.txt")
    media = (answer.json() or {}).get("media") if isinstance(answer.json(), dict) else None
    if answer.status not in (200, 201) or not isinstance(media, dict):
        raise CheckFailed(f"a raw upload with ?name= answered {answer.describe()}")
    if media.get("kind") != "image":
        raise CheckFailed(
            f'a PNG named notes.txt was stored as kind {show(media.get("kind"))}; {SPEC}: "The '
            'kind is decided from the bytes, not from what the caller says."'
        )


IDLE = 30.0  # "A stream that is idle for 30 seconds is finished by the hub and marked truncated"
MAX_FILES = 10


async def _upload(session: HubSession, made: Throwaway, content: bytes, name: str) -> Answer:
    """The agent uploads `content` as raw bytes named `name`; the raw answer."""
    return await session.hub.request(
        "POST",
        "/v1/agent/media",
        made.agent,
        content=content,
        params={"name": name},
        headers={"Content-Type": "application/octet-stream"},
    )


async def _upload_png(session: HubSession, made: Throwaway) -> str:
    """A tiny PNG uploaded by the agent; its media id."""
    answer = await _upload(session, made, PNG + uuid.uuid4().bytes, "dot.png")
    data = answer.json()
    if answer.status not in (200, 201) or not isinstance(data, dict):
        raise CheckFailed(f"uploading a PNG answered {answer.describe()}")
    return str(data["media"]["id"])


@check("attachments", section="Media")
async def attachments(session: HubSession) -> None:
    """At most ten files per message, no duplicates, and each file sent once."""
    made = await session.throwaway()
    hub, path = session.hub, _messages(made.conversation_id)
    files = [await _upload_png(session, made) for _ in range(MAX_FILES + 1)]
    rule = (
        f'{SPEC}: "At most ten files per message, no duplicates, and each file may be sent once."'
    )
    cases = {
        "eleven files": files,
        "one file twice": [files[0], files[0]],
    }
    for what, attached in cases.items():
        answer = await hub.request(
            "POST", path, made.agent, json_body={"text": what, "attachments": attached}
        )
        if answer.status != 422:
            raise CheckFailed(f"a message with {what} answered {answer.describe()}; {rule}")
    await hub.ok("POST", path, made.agent, "sending a file", json_body={"attachments": [files[0]]})
    again = await hub.request("POST", path, made.agent, json_body={"attachments": [files[0]]})
    if again.status < 400:
        raise CheckFailed(f"sending the same file again answered {again.describe()}; {rule}")


@check("idle-truncation", section="Streaming", timeout=IDLE + 45.0, slow=True)
async def idle_truncation(session: HubSession) -> None:
    """A stream left idle for 30 s is finished by the hub and marked truncated."""
    made = await session.throwaway()
    hub = session.hub
    message_id = await _start_stream(hub, made)
    await _append(hub, made, message_id, "Left hanging")
    path = f"/v1/client/conversations/{made.conversation_id}/messages"
    deadline = time.monotonic() + IDLE + max(10.0, IDLE / 2)
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


# --- leases, paging, typing, media limits, later retries -------------------------------------

LEASE_BATCH = 100  # "The hub leases up to 100 events at a time."
PAGE_MAX = 100  # "/events … up to 100 at a time"
TYPING = 10.0  # "A start expires by itself after 10 seconds."
TYPING_SKEW = 5.0  # the hub's clock and ours
IMAGE_MAX = 16 * MIB
RETRIES = (1.0, 5.0, 30.0)  # "retried after 1 second, then 5 seconds, 30 seconds"
PERSON_BURST = 25  # messages one person may send at once (the hub's burst is 30)


async def _crowd(session: HubSession, made: Throwaway, count: int) -> None:
    """At least `count` events due for `made`'s agent: on a development hub, fresh people join
    and each sends a burst (one person may not send that many at once)."""
    if not session.dev:
        raise CheckSkipped(
            f"needs {count} events, more than one person may send at once: a development hub"
        )
    sent = 0
    while sent < count:
        chat = await make_joined(session, made)
        sent += 1  # the join is an event
        for _ in range(min(PERSON_BURST, count - sent)):
            await chat.say(session.hub, f"crowd {sent}")
            sent += 1


async def make_joined(session: HubSession, made: Throwaway) -> Throwaway:
    """A fresh development person joins `made`'s agent by a code; their chat."""
    person = Party.person(None)
    minted = await session.hub.ok(
        "POST", f"/v1/mgmt/agents/{made.agent_id}/pair-tokens", made.owner, "a code", json_body={}
    )
    accepted = await session.hub.ok(
        "POST", f"/v1/client/pair/{minted['code']}/accept", person, "accepting the code"
    )
    conversation = str(accepted["conversation"]["id"])
    return Throwaway(made.owner, person, made.agent_id, made.secret, conversation)


PAGE_READ = 20  # a page of this many stays within the 64 KiB of an answer the checks read


async def _all_events(session: HubSession, made: Throwaway, page: int = PAGE_READ) -> list[str]:
    """The ids of every event of `made`'s agent, by `/events` pages of `page` with since=."""
    ids: list[str] = []
    params = {"limit": str(page)}
    while True:
        answer = await session.hub.ok(
            "GET", "/v1/agent/events", made.agent, "GET /v1/agent/events", params=params
        )
        events = answer.get("events") if isinstance(answer, dict) else None
        if not isinstance(events, list):
            raise CheckFailed(f"GET /v1/agent/events answered {show(answer, 120)}")
        if len(events) > page:
            raise CheckFailed(
                f"GET /v1/agent/events?limit={page} answered {len(events)} events; {PAGE_RULE}"
            )
        ids += [str(event.get("id")) for event in events]
        if not events or len(ids) > 10 * PAGE_MAX:  # a hub that ignores since= ends here
            return ids
        params = {"limit": str(page), "since": ids[-1]}


PAGE_RULE = f'{SPEC}: "returns events in order, oldest first, up to 100 at a time"'


@check("push-backlog", section="The socket; Acknowledging", timeout=60.0)
async def push_backlog(session: HubSession) -> None:
    """More than one lease (100) of missed events all arrive on connect, unacknowledged."""
    made = await session.throwaway()
    await _crowd(session, made, LEASE_BATCH + 3)
    expected = await _all_events(session, made)
    pushed: list[str] = []

    def new_event(frame: dict[str, Any]) -> bool:
        fresh = "type" in frame and str(frame.get("id")) not in pushed
        if fresh:
            pushed.append(str(frame.get("id")))
        return fresh

    async with session.hub.agent_socket(made.secret) as socket:
        while len(pushed) < len(expected):
            if await socket.quiet(new_event, QUIET + 3) is None:
                break
        for event_id in pushed:
            await socket.ack(event_id)
    # The order is the catch-up checks' rule; here, that nothing missed is held back.
    if set(pushed) != set(expected):
        raise CheckFailed(
            f"{len(expected)} events were due and {len(pushed)} were pushed on connect; "
            f'{SPEC}: "events start '
            'arriving … straight away, including anything you missed while away" … "The hub '
            'leases up to 100 events at a time."'
        )


@check("events-paging", section="Catching up over HTTP")
async def events_paging(session: HubSession) -> None:
    """GET /v1/agent/events pages with limit and since: no gap, no repeat, at most 100."""
    made = await session.throwaway()
    for text in ("one", "two", "three", "four"):
        await made.say(session.hub, text)
    everything = await _all_events(session, made)
    paged = await _all_events(session, made, page=2)
    if paged != everything:
        raise CheckFailed(
            f"paging by two with since= gave {show(paged, 120)}, the whole list is "
            f"{show(everything, 120)}; {PAGE_RULE}"
        )
    path, limit = "/v1/agent/events", PAGE_MAX * 10
    answer = await session.hub.request("GET", path, made.agent, params={"limit": str(limit)})
    if answer.status != 200:
        expect_error(answer, 422, None, f"{path}?limit={limit}")
    elif len((answer.json() or {}).get("events", [])) > PAGE_MAX:
        raise CheckFailed(f"{path}?limit={limit} answered more than {PAGE_MAX} events; {PAGE_RULE}")


@check("typing-expiry", section="Typing")
async def typing_expiry(session: HubSession) -> None:
    """A typing start reaches the person and expires by itself after 10 s; stop hides it."""
    made = await session.throwaway()
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
        if abs(left - TYPING) > TYPING_SKEW:
            raise CheckFailed(f"the indicator expires {left:.0f} s from now; {rule}")
        await session.hub.ok("POST", path, made.agent, "typing stop", json_body={"state": "stop"})
        await socket.wait_for(activity("stop"), "hidden typing indicator for the person")


TYPING_STATES = {"start": "thinking", "stop": "idle"}  # the newer `activity` frame's words


@check("media-limits", section="Media")
async def media_limits(session: HubSession) -> None:
    """An image over 16 MiB is refused with 422 file_too_large."""
    made = await session.throwaway()
    answer = await _upload(session, made, PNG + b"\x00" * (IMAGE_MAX + 1 - len(PNG)), "big.png")
    rule = (
        f'{SPEC}: "image 16 MiB" … "An oversized body is 422 body_too_large and an oversized '
        'file is 422 file_too_large."'
    )
    if answer.status < 400:
        raise CheckFailed(f"an image of 16 MiB and a byte was stored; {rule}")
    try:
        expect_error(answer, 422, "file_too_large", "an image over 16 MiB")
    except CheckFailed as failure:
        raise CheckFailed(f"{failure}; {rule}") from None


@check(
    "webhook-retries",
    section="Delivery",
    timeout=sum(RETRIES) * 1.5 + 30.0,
    slow=True,
)
async def webhook_retries(session: HubSession) -> None:
    """A failing webhook is retried after 1 s, then 5 s, then 30 s."""
    receiver = Receiver(fail_first=len(RETRIES))
    wait = sum(RETRIES) * 1.5 + 10.0
    await _webhook_posts(session, receiver, wanted=len(RETRIES) + 1, wait=wait)
    rule = (
        f'{SPEC}: "A failed delivery is retried after 1 second, then 5 seconds, 30 seconds, 2 '
        'minutes, 10 minutes, and hourly after that."'
    )
    if not receiver.posts:
        raise CheckFailed(f"the hub posted nothing to the webhook within {WEBHOOK_WAIT:g} s")
    first = receiver.posts[0].headers.get("x-cuckoo-event-id", "")
    times = [post.at for post in receiver.of(first)]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    if len(gaps) < len(RETRIES):
        raise CheckFailed(
            f"the event was posted {len(times)} times within {wait:g} s, failing each time; {rule}"
        )
    for gap, expected in zip(gaps, RETRIES, strict=False):
        if not expected * 0.8 - 0.2 <= gap <= expected * 1.5 + 2.0:
            shown = ", ".join(f"{g:.1f}" for g in gaps[: len(RETRIES)])
            raise CheckFailed(f"the retries came after {shown} s; {rule}")
