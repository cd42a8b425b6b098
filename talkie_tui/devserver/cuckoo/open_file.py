"""A download answered from a file opened before the answer starts.

Starlette's `FileResponse` opens its path only while it sends the body, so a file deleted in
between (the media sweeper) gave a 200 whose body broke off, or a 500. Here the route opens the
file first: missing, it answers 404; open, the whole file goes out even if it is unlinked
meanwhile (an open file outlives its name on POSIX systems). One byte range is honoured; other
`Range` headers get the whole file, as HTTP allows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import BinaryIO
from urllib.parse import quote

import anyio.to_thread
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

CHUNK = 64 * 1024
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


def open_or_none(path: os.PathLike[str]) -> BinaryIO | None:
    """The file open for reading, or None when it is not there (any longer)."""
    try:
        return open(path, "rb")
    except (FileNotFoundError, NotADirectoryError):
        return None


class Unsatisfiable(Exception):
    """A range that starts past the end of the file (answered 416)."""


def one_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(start, end exclusive) of a single range; None: send the whole file. Raises
    `Unsatisfiable`."""
    if header is None:
        return None
    match = _RANGE.fullmatch(header.strip())
    if match is None or not (match[1] or match[2]):
        return None  # several ranges, other units, nonsense: the whole file
    if not match[1]:  # the last N bytes
        suffix = int(match[2])
        if not suffix or not size:
            raise Unsatisfiable
        return max(0, size - suffix), size
    start = int(match[1])
    if match[2] and int(match[2]) < start:
        return None  # not a valid range: ignored
    end = min(int(match[2]) + 1, size) if match[2] else size
    if start >= size or end <= start:
        raise Unsatisfiable
    return start, end


class OpenFileResponse(Response):
    """The bytes of an open file (closed once sent, or when sending fails)."""

    def __init__(
        self,
        file: BinaryIO,
        *,
        media_type: str,
        filename: str,
        disposition: str = "inline",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.file = file
        self.size = os.fstat(file.fileno()).st_size
        quoted = quote(filename)
        if quoted != filename:
            value = f"{disposition}; filename*=utf-8''{quoted}"
        else:
            value = f'{disposition}; filename="{filename}"'
        super().__init__(
            status_code=200,
            media_type=media_type,
            headers={**(headers or {}), "content-disposition": value, "accept-ranges": "bytes"},
        )
        # Response's own content-length (of an empty body) is replaced by the file's.
        self.raw_headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._send(scope, send)
        finally:
            self.file.close()

    async def _send(self, scope: Scope, send: Send) -> None:
        wanted = None
        for name, value in scope.get("headers", []):
            if name == b"range":
                wanted = value.decode("latin-1")
        headers = list(self.raw_headers)
        try:
            span = one_range(wanted, self.size)
        except Unsatisfiable:
            headers = [(k, v) for k, v in headers if k != b"content-type"]
            headers += [(b"content-range", f"bytes */{self.size}".encode())]
            headers += [(b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 416, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        status, (start, end) = (200, (0, self.size)) if span is None else (206, span)
        headers.append((b"content-length", str(end - start).encode()))
        if status == 206:
            headers.append((b"content-range", f"bytes {start}-{end - 1}/{self.size}".encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if scope.get("method") == "HEAD":
            await send({"type": "http.response.body", "body": b""})
            return
        self.file.seek(start)
        left = end - start
        while True:
            want = min(CHUNK, left)
            # A small file is read at once; larger chunks off the event loop.
            chunk = (
                self.file.read(want)
                if left <= CHUNK
                else await anyio.to_thread.run_sync(self.file.read, want)
            )
            left -= len(chunk)
            more = bool(chunk) and left > 0
            await send({"type": "http.response.body", "body": chunk, "more_body": more})
            if not more:
                return
