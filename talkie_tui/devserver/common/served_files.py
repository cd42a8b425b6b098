"""How a reference server serves bytes someone uploaded: as a download, never as a page of the
server's origin. An uploaded HTML or SVG file rendered inline would run its scripts with the
origin's cookies and storage (stored cross-site scripting)."""

from __future__ import annotations

from collections.abc import Mapping

DISPOSITION = "attachment"
"""The browser saves the file instead of showing it."""

DOWNLOAD_HEADERS: Mapping[str, str] = {
    # The browser keeps the type the server decided from the bytes, and a file opened anyway
    # runs in a sandbox: no scripts, no access to the origin.
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox",
}
"""Headers of every response that carries uploaded bytes, beside its `DISPOSITION`."""
