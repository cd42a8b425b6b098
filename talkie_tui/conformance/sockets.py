"""What the socket checks of every protocol share: waiting for the server to close a socket."""

from __future__ import annotations

import asyncio

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from talkie_tui.conformance.report import CheckFailed

__all__ = ["close_code"]


async def close_code(connection: ClientConnection, wait: float) -> int | None:
    """The code the server closes `connection` with (frames before it are read and dropped);
    the check fails when it stays open `wait` seconds."""
    try:
        async with asyncio.timeout(wait):
            while True:
                await connection.recv()
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd is not None else None
    except TimeoutError:
        raise CheckFailed(f"the socket stayed open for {wait:g} s") from None
