"""`GET /v1/client/socket`: live updates for a person's app (it sends nothing but pongs).

A browser cannot set headers on a WebSocket, so the token may come as the subprotocol pair
`cuckoo, <token>`; the hub then selects `cuckoo`. A feed that falls too far behind is closed
with 1001 and the app catches up over REST; the socket of a session that ends (sign-out, a
device signed out) is closed with 4002 before the request that ended it answers, and one whose
session expired with 4002 instead of its next frame.
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.websockets import WebSocket, WebSocketDisconnect

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.cuckoo.live import SIGNED_OUT
from talkie_tui.devserver.cuckoo.principals import principal_of, user_of
from talkie_tui.devserver.cuckoo.routing import hub_of

SUBPROTOCOL = "cuckoo"


async def client_socket(websocket: WebSocket) -> None:
    """GET /v1/client/socket"""
    hub = hub_of(websocket)
    user_id = user_of(websocket)
    offered = websocket.scope.get("subprotocols") or []
    await websocket.accept(subprotocol=SUBPROTOCOL if SUBPROTOCOL in offered else None)
    principal = principal_of(websocket)
    expires = principal.session_expires_at
    feed = hub.feeds.open(
        user_id, principal.session_id, clock.parse_iso(expires) if expires else None
    )
    feed.put(f'{{"type":"ready","data":{{"user_id":"{user_id}"}}}}')

    async def drain() -> None:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass

    async def write() -> None:
        try:
            while True:
                text = await feed.queue.get()
                if feed.ended is None and feed.expired():
                    feed.ended = (SIGNED_OUT, "the session expired")
                if feed.ended is not None:
                    await websocket.close(*feed.ended)
                    return
                if text is None or feed.overflowed:
                    code = 1001 if feed.overflowed else 1012
                    await websocket.close(code, "reconnect")
                    return
                await websocket.send_text(text)
        finally:
            feed.closed.set()

    tasks = [asyncio.create_task(drain()), asyncio.create_task(write())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            await asyncio.gather(*tasks, return_exceptions=True)
        hub.feeds.close(feed)
