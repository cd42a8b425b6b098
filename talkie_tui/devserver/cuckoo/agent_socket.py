"""`GET /v1/agent/socket`: events pushed as they are due (leased, redelivered until acked) and
the ops a backend sends (`send`, `stream.*`, `typing`, `activity`), replied to by `cid`.

One socket per agent: a newer one closes the older with 4001; a revoked or replaced binding
closes with 4002; a stopping hub closes with 1012. A frame that is not one JSON object the
shared decoder accepts gets an `invalid_json` reply (by its `cid` when it can be read; the
public hub drops such frames in silence, which leaves a backend waiting for its reply). Pings
and the 64 KiB frame cap are the server's (uvicorn's `ws_ping_*` and `ws_max_size`).
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from talkie_tui.core.waiting import wait_event
from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.json_input import JsonInputError, decode, encodable
from talkie_tui.devserver.common.tasks import until_first_ends
from talkie_tui.devserver.cuckoo.drafts import Draft
from talkie_tui.devserver.cuckoo.errors import ApiError, forbidden, invalid
from talkie_tui.devserver.cuckoo.outbox import dump
from talkie_tui.devserver.cuckoo.principals import principal_of
from talkie_tui.devserver.cuckoo.routing import hub_of
from talkie_tui.devserver.cuckoo.services import Hub

logger = logging.getLogger(__name__)
Close = tuple[int, str]
# The error of an op whose writes the hub could not commit.
NOT_STORED = {"code": "internal", "message": "The hub could not store this; send it again."}


class AgentSocket:
    """One agent's open socket."""

    def __init__(self, websocket: WebSocket, hub: Hub, agent_id: str) -> None:
        self.websocket = websocket
        self.hub = hub
        self.agent_id = agent_id
        self._out: asyncio.Queue[str | Close] = asyncio.Queue()
        self._wake = asyncio.Event()
        # Events pushed and not yet acknowledged: released for the next socket when this closes.
        self._in_flight: set[str] = set()
        # Every event due has been pushed: a new one is stored leased and pushed at once.
        self.caught_up = False
        # The pump sleeps until woken (no lease runs out at a time it knows of).
        self._pump_idle = False
        self._closed = asyncio.Event()

    def wake(self) -> None:
        """Events are due."""
        self._wake.set()

    def close_soon(self, code: int, reason: str) -> None:
        """Close after what is queued has gone out."""
        self._out.put_nowait((code, reason))

    def send(self, frame: dict[str, Any], failed: dict[str, Any] | None = None) -> None:
        """Queue a frame once the writes before it are committed (`failed` instead if that
        COMMIT fails)."""
        text = dump(frame)
        instead = dump(failed) if failed is not None else None
        self.hub.storage.after_commit(
            partial(self._out.put_nowait, text),
            partial(self._out.put_nowait, instead) if instead is not None else None,
        )

    def push_leased(self, event_id: str, frame: str) -> None:
        """Push an event that was stored leased to this socket (once it is committed)."""
        self._in_flight.add(event_id)
        self.hub.storage.after_commit(partial(self._out.put_nowait, frame))
        if self._pump_idle:
            self._wake.set()  # so the pump learns when this lease runs out

    async def run(self) -> None:
        """Serve until the backend leaves or the socket is closed."""
        try:
            await until_first_ends(self._read(), self._write(), self._pump())
        finally:
            self.caught_up = False
            if self._in_flight:
                now = clock.iso(clock.now())
                self.hub.storage.release(self.agent_id, list(self._in_flight), now)
                self.hub.links.wake(self.agent_id)  # a newer socket may be waiting for them

    async def wait_closed(self, within: float) -> None:
        """Wait (at most `within` seconds) until the socket's close frame is out."""
        await wait_event(self._closed, within)

    async def _write(self) -> None:
        try:
            while True:
                item = await self._out.get()
                try:
                    if isinstance(item, tuple):
                        await self.websocket.close(item[0], item[1])
                        return
                    await self.websocket.send_text(item)
                except (WebSocketDisconnect, RuntimeError, OSError):
                    return
        finally:
            self._closed.set()

    async def _pump(self) -> None:
        config = self.hub.config
        storage = self.hub.storage
        while True:
            self._wake.clear()
            now = clock.now()
            lease_until = clock.iso(clock.later(config.lease_seconds, now))
            with storage.grouped():
                rows = storage.claim_due(
                    self.agent_id, clock.iso(now), lease_until, config.lease_batch, decode=False
                )
                for row in rows:
                    self._in_flight.add(row["id"])
                    storage.after_commit(
                        partial(self._out.put_nowait, self.hub.outbox.frame_of(row))
                    )
                due = storage.next_due(self.agent_id)
            self.caught_up = len(rows) < config.lease_batch
            timeout = None
            if due is not None:
                timeout = max(0.0, (clock.parse_iso(due) - clock.now()).total_seconds())
            self._pump_idle = timeout is None
            await wait_event(self._wake, timeout)

    async def _read(self) -> None:
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                continue  # JSON text frames only: anything else is dropped
            try:
                frame = decode(text)
            except JsonInputError as error:
                self._refuse(error)
                continue
            if isinstance(frame, dict):
                self._handle(frame)
            else:
                self._reply_error(None, None, {}, invalid("invalid_json", "A frame is an object."))

    def _refuse(self, error: JsonInputError) -> None:
        """Answer a frame the decoder refused: by its `cid` when the frame could be read (a
        backend waiting for that reply must not resend the frame forever), else with none."""
        frame = error.document if isinstance(error.document, dict) else {}
        cid = frame.get("cid")
        if not isinstance(cid, str) or not encodable(cid):
            cid = None
        message_id = frame.get("message_id")
        if not isinstance(message_id, str) or not encodable(message_id):
            message_id = None
        refusal = invalid("invalid_json", str(error))
        self._reply_error(frame.get("op"), cid, {"message_id": message_id}, refusal)

    def _handle(self, frame: dict[str, Any]) -> None:
        storage = self.hub.storage
        ack = frame.get("ack")
        if isinstance(ack, str):
            self._in_flight.discard(ack)
            with storage.grouped():
                self.hub.outbox.acknowledge(self.agent_id, ack)
            if "op" not in frame:
                return
        op = frame.get("op")
        cid = frame.get("cid")
        try:
            with storage.grouped():
                result = self._op(op, frame)
        except ApiError as error:
            self._reply_error(op, cid, frame, error)
            return
        if op == "stream.delta" or (op in ("typing", "activity") and cid is None):
            return
        reply = {"reply_to_cid": cid, "ok": True}
        if result is not None:
            reply["message"] = result
        self.send(reply, failed={"reply_to_cid": cid, "ok": False, "error": NOT_STORED})

    def _reply_error(self, op: Any, cid: Any, frame: dict[str, Any], error: ApiError) -> None:
        """The failure reply of a frame: a delta's by `message_id`, typing and activity only
        when they gave a `cid`, any other by `cid`."""
        if op == "stream.delta":
            reply: dict[str, Any] = {"ok": False, "message_id": frame.get("message_id")}
            if cid is not None:
                reply["reply_to_cid"] = cid
            self.send({**reply, "error": error.as_frame()})
        elif cid is not None or op not in ("typing", "activity"):
            self.send({"reply_to_cid": cid, "ok": False, "error": error.as_frame()})

    def _op(self, op: Any, frame: dict[str, Any]) -> dict[str, Any] | None:
        chat, streams, forms = self.hub.chat, self.hub.streams, self.hub.forms
        conversation_id = str(frame.get("conversation_id") or "")
        if op in ("send", "stream.start"):
            if frame.get("attachments"):
                raise ApiError(
                    422,
                    "attachments_not_allowed",
                    "Files go through POST /v1/agent/conversations/{id}/messages.",
                )
            draft = Draft.of({**frame, "stream": op == "stream.start", "attachments": None})
            return forms.agent_form_of(chat.send_by_agent(self.agent_id, conversation_id, draft))
        if op == "stream.delta":
            streams.append(self.agent_id, str(frame.get("message_id") or ""), frame.get("text"))
            return None
        if op == "stream.end":
            row = streams.finish(
                self.agent_id,
                str(frame.get("message_id") or ""),
                frame.get("buttons"),
                frame.get("quick_replies"),
            )
            return forms.agent_form(row)
        if op == "typing":
            chat.typing(self.agent_id, conversation_id, frame.get("state"))
            return None
        if op == "activity":
            chat.activity(self.agent_id, conversation_id, frame.get("state"), frame.get("label"))
            return None
        raise ApiError(422, "unknown_op", f"Unknown op {op!r}.")


async def agent_socket(websocket: WebSocket) -> None:
    """GET /v1/agent/socket"""
    hub = hub_of(websocket)
    principal = principal_of(websocket)
    assert principal.agent_id is not None and principal.binding_id is not None
    if principal.binding_mode != "socket":
        refusal = forbidden("binding_not_socket", "This agent's binding is in webhook mode.")
        await websocket.send_denial_response(refusal.response())
        return
    # Attached before the accept's await, so a binding replaced meanwhile closes it (4002);
    # and a binding replaced before this handler ran is closed at once.
    link = AgentSocket(websocket, hub, principal.agent_id)
    hub.links.attach(principal.agent_id, principal.binding_id, link)
    live = hub.storage.live_binding(principal.agent_id)
    if live is None or live["id"] != principal.binding_id:
        hub.links.revoke(principal.agent_id, [principal.binding_id])
    try:
        await websocket.accept()
        hub.outbox.succeeded(principal.agent_id)
        hub.presence.announce(principal.agent_id)
        await link.run()
    finally:
        if hub.links.detach(principal.agent_id, link):
            hub.presence.announce(principal.agent_id)
