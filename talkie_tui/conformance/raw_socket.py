"""A bare WebSocket client over asyncio streams, for the checks that must see a server's control
frames: `websockets` answers pings by itself, this client only when the check says so."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import os
import ssl
import struct
from collections.abc import AsyncIterator, Collection, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from talkie_tui.conformance.report import CheckFailed, show

__all__ = ["CLOSE", "PING", "PONG", "Frame", "RawSocket", "open_raw_socket"]

CLOSE, PING, PONG = 0x8, 0x9, 0xA
OPEN_WAIT = 10.0
MAX_FRAME = 16 * 1024 * 1024  # no hub sends more in one frame: the check fails
_ACCEPT_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, section 1.3


@dataclass(frozen=True)
class Frame:
    """One frame the server sent (the end of the connection reads as a close without a code)."""

    opcode: int
    payload: bytes = b""

    @property
    def close_code(self) -> int | None:
        """The code of a close frame, if it carries one."""
        return int.from_bytes(self.payload[:2], "big") if len(self.payload) >= 2 else None


class RawSocket:
    """One open client WebSocket, frame by frame: nothing is answered unless the caller sends it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ended = False
        self._reading: asyncio.Task[Frame] | None = None  # a read a timeout must not cut

    async def read(self) -> Frame:
        """The server's next frame, unmasked (a close frame once the connection ends)."""
        try:
            first, second = await self.reader.readexactly(2)
            length = second & 0x7F
            if length >= 126:
                length = int.from_bytes(
                    await self.reader.readexactly(2 if length == 126 else 8), "big"
                )
            if length > MAX_FRAME:
                raise CheckFailed(f"the server sent a socket frame of {length} bytes")
            mask = await self.reader.readexactly(4) if second & 0x80 else b""
            payload = _masked(await self.reader.readexactly(length), mask)
        except (asyncio.IncompleteReadError, ConnectionError):
            payload, first = b"", CLOSE
        frame = Frame(first & 0x0F, payload)
        self.ended = frame.opcode == CLOSE
        return frame

    async def next_of(self, opcodes: Collection[int], wait: float) -> Frame | None:
        """The first frame of `opcodes` (or a close) within `wait` seconds, else None; the
        frames between are dropped."""
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            if self._reading is None:
                self._reading = asyncio.ensure_future(self.read())
            try:
                async with asyncio.timeout_at(deadline):
                    frame = await asyncio.shield(self._reading)
            except TimeoutError:
                return None
            self._reading = None
            if frame.opcode in opcodes or frame.opcode == CLOSE:
                return frame

    async def send(self, opcode: int, payload: bytes = b"") -> None:
        """Send one control frame (at most 125 bytes), masked as a client must."""
        if len(payload) > 125:
            raise ValueError("a control frame carries at most 125 bytes")
        mask = os.urandom(4)
        header = bytes([0x80 | opcode, 0x80 | len(payload)])
        self.writer.write(header + mask + _masked(payload, mask))
        await self.writer.drain()

    async def close(self) -> None:
        """Say goodbye (1000) unless the connection already ended, and hang up."""
        if self._reading is not None:
            self._reading.cancel()
        with contextlib.suppress(OSError):
            if not self.ended:
                await self.send(CLOSE, struct.pack("!H", 1000))
            self.writer.close()
            await self.writer.wait_closed()


def _masked(data: bytes, mask: bytes) -> bytes:
    """`data` XOR the 4-byte `mask` repeated (masking and unmasking are one); no mask: `data`."""
    if not mask:
        return data
    repeated = (mask * (len(data) // 4 + 1))[: len(data)]
    mixed = int.from_bytes(data, "big") ^ int.from_bytes(repeated, "big")
    return mixed.to_bytes(len(data), "big")


@asynccontextmanager
async def open_raw_socket(url: str, headers: Mapping[str, str]) -> AsyncIterator[RawSocket]:
    """The WebSocket at `url` (ws:// or wss://), opened with `headers` and closed on exit; a
    refusal, or no answer within 10 s, fails the check."""
    parts = urlsplit(url)
    try:
        async with asyncio.timeout(OPEN_WAIT):
            socket = await _handshake(parts, headers)
    except (OSError, TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
        reason = str(error) or type(error).__name__
        raise CheckFailed(f"GET {parts.path} did not open: {reason}") from None
    try:
        yield socket
    finally:
        await socket.close()


async def _handshake(parts: SplitResult, headers: Mapping[str, str]) -> RawSocket:
    """Connect and upgrade (RFC 6455, section 4.1); a refusal fails the check."""
    secure = parts.scheme == "wss"
    reader, writer = await asyncio.open_connection(
        parts.hostname,
        parts.port or (443 if secure else 80),
        ssl=ssl.create_default_context() if secure else None,
    )
    key = base64.b64encode(os.urandom(16))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [
        f"GET {target} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key.decode()}",
        "Sec-WebSocket-Version: 13",
        *(f"{name}: {value}" for name, value in headers.items()),
    ]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    status, fields = _answer_head(await reader.readuntil(b"\r\n\r\n"))
    accept = hashlib.sha1(key + _ACCEPT_GUID, usedforsecurity=False).digest()
    if status == 101 and fields.get("sec-websocket-accept") == base64.b64encode(accept).decode():
        return RawSocket(reader, writer)
    length = fields.get("content-length", "")
    body = await reader.read(min(int(length), 4096)) if length.isdigit() else b""
    writer.close()
    if status == 101:
        raise CheckFailed(f"GET {parts.path} answered 101 with a wrong Sec-WebSocket-Accept")
    text = show(body.decode(errors="replace"))
    raise CheckFailed(f"GET {parts.path} answered HTTP {status} {text}")


def _answer_head(head: bytes) -> tuple[int, dict[str, str]]:
    """The status and header fields (by lower-case name) of an HTTP answer's head."""
    status_line, *lines = head.decode("latin-1").strip().split("\r\n")
    words = status_line.split(" ", 2)
    status = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
    fields: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return status, fields
