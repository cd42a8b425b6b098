"""Media files: the bytes on disk (named by id, never by anything the caller chose), names to
show, and image thumbnails made with Pillow; the kind and type come from the bytes
(`common/sniff.py`)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from talkie_tui.devserver.cuckoo.config import HubConfig

THUMB_PIXELS = 480
NAME_CHARS = 255


def clean_name(name: str | None) -> str:
    """A file name to show: no path separators or control characters, at most 255 chars."""
    kept = "".join(
        "_" if ch in "/\\" or ord(ch) < 32 or ord(ch) == 127 else ch for ch in name or ""
    )
    return kept.strip()[:NAME_CHARS] or "file"


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height of an image Pillow can read, else None."""
    from PIL import Image

    with contextlib.suppress(Exception), Image.open(io.BytesIO(data)) as image:
        return image.size
    return None


def thumbnail(data: bytes) -> bytes | None:
    """A JPEG at most 480 px on its long side, or None when the image cannot be read."""
    from PIL import Image

    with contextlib.suppress(Exception), Image.open(io.BytesIO(data)) as image:
        image.thumbnail((THUMB_PIXELS, THUMB_PIXELS))
        out = io.BytesIO()
        image.convert("RGB").save(out, "JPEG", quality=80)
        return out.getvalue()
    return None


class MediaFiles:
    """The bytes of media in the data folder: `<id>` and `<id>.thumb`."""

    def __init__(self, config: HubConfig) -> None:
        self.folder = config.resolved_data_dir()
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, media_id: str, variant: str | None = None) -> Path:
        """Where a file's bytes (or its thumbnail) live; the id comes from our table."""
        return self.folder / (f"{media_id}.thumb" if variant == "thumb" else media_id)

    def write(self, media_id: str, data: bytes, thumb: bytes | None) -> None:
        """Store the bytes of a new file."""
        self.path(media_id).write_bytes(data)
        if thumb is not None:
            self.path(media_id, "thumb").write_bytes(thumb)

    def stored_ids(self) -> list[str]:
        """The ids of every file in the folder (a thumbnail counts under its file's id)."""
        return sorted({path.name.removesuffix(".thumb") for path in self.folder.iterdir()})

    def remove(self, media_id: str) -> None:
        """Delete a file's bytes."""
        for variant in (None, "thumb"):
            self.path(media_id, variant).unlink(missing_ok=True)
