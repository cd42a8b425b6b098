"""A TCP proxy on 127.0.0.1 that can take the server away and bring it back on the same port:
for a client, the server died (connections cut, new ones refused) and came back."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx

__all__ = ["KillableProxy"]


class KillableProxy:
    """Forwards every connection to `target` until `down()`; `up()` listens again."""

    def __init__(self, target: str) -> None:
        url = httpx.URL(target)
        self._target = (url.host, url.port or 80)
        self._server: asyncio.Server | None = None
        self._port = 0
        self._writers: set[Any] = set()

    async def __aenter__(self) -> KillableProxy:
        await self.up()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.down()

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:port` of the proxy (the same after `down()` and `up()`)."""
        return f"http://127.0.0.1:{self._port}"

    async def up(self) -> None:
        """Listen (again, on the same port): the server is back."""
        self._server = await asyncio.start_server(
            self._connection, "127.0.0.1", self._port, reuse_address=True
        )
        self._port = self._server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        """Stop listening and cut every connection: the server is gone."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._writers.clear()

    async def _connection(self, client_in: asyncio.StreamReader, client_out: Any) -> None:
        try:
            server_in, server_out = await asyncio.open_connection(*self._target)
        except OSError:
            client_out.transport.abort()
            return
        self._writers.update((client_out, server_out))

        async def pipe(reader: asyncio.StreamReader, writer: Any) -> None:
            with contextlib.suppress(Exception):
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            with contextlib.suppress(Exception):
                writer.close()

        await asyncio.gather(pipe(client_in, server_out), pipe(server_in, client_out))
        self._writers.discard(client_out)
        self._writers.discard(server_out)
