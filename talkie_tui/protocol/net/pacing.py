"""Reading a streamed answer in bursts, for a screen that draws some 24 frames a second.

A token comes every few milliseconds. Read as they come, each one wakes the reader (a socket
read, a parse, a hand-over) although the screen shows them only at its next frame. A read that
had to wait for the network is instead followed by a short rest; the next read then takes every
token that came meanwhile in one go. What was already buffered is read on at once.
"""

from __future__ import annotations

import asyncio

__all__ = ["WAITED_SECONDS", "rest_after"]

WAITED_SECONDS = 0.0005
"""A read that took longer than this waited for the network (a buffered one takes microseconds)."""


async def rest_after(waited: float, pause: float) -> None:
    """Rest `pause` seconds after a read that took `waited` seconds, if it waited; else let the
    loop run the rest (the screen may draw) before the next buffered read."""
    if pause:
        await asyncio.sleep(pause if waited > WAITED_SECONDS else 0)
