"""An ASGI app served on 127.0.0.1 (a free port) inside the running event loop, for as long as
a check needs it: the agent mode's relay, a webhook receiver."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from starlette.types import ASGIApp

__all__ = ["serve_local"]

START_WAIT = 30.0


@asynccontextmanager
async def serve_local(app: ASGIApp) -> AsyncIterator[str]:
    """Serve `app` on 127.0.0.1 and yield its origin; stop it on exit."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="critical",
        lifespan="off",
        access_log=False,
        ws="websockets-sansio",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(START_WAIT):
            while not server.started:  # noqa: ASYNC110 (uvicorn offers no event to wait on)
                await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task
