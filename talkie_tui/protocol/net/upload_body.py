"""The bytes of a file going up in a request body: read in chunks as they are sent, never
whole, each chunk reported to a progress callback. Minara's multipart body wraps one; a Cuckoo
upload sends one raw."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

__all__ = ["CHUNK", "FileBody", "Progress"]

CHUNK = 64 * 1024
Progress = Callable[[int, int], None]
"""`progress(sent, total)`: the file's bytes sent so far, and its size."""


class FileBody:
    """A file (a path, read as it is sent, or bytes) as chunks; `total` is known before."""

    def __init__(self, content: Path | bytes, *, progress: Progress | None = None) -> None:
        self._content = content
        self._progress = progress
        self.total = content.stat().st_size if isinstance(content, Path) else len(content)

    def _report(self, sent: int) -> None:
        if self._progress is not None:
            self._progress(sent, self.total)

    async def chunks(self) -> AsyncIterator[bytes]:
        """The file's bytes, chunk by chunk, progress reported from 0 to the last one sent."""
        sent = 0
        self._report(0)
        if isinstance(self._content, bytes):
            for start in range(0, self.total, CHUNK):
                piece = self._content[start : start + CHUNK]
                yield piece
                sent += len(piece)
                self._report(sent)
            return
        with self._content.open("rb") as file:
            while sent < self.total:
                piece = file.read(min(CHUNK, self.total - sent))
                if not piece:
                    break  # the file shrank meanwhile: the server will see a short body
                yield piece
                sent += len(piece)
                self._report(sent)
