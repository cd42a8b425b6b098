"""Storage of media records (their bytes live in the data folder, named by id)."""

from __future__ import annotations

import json

from talkie_tui.devserver.common.sqlite import Row
from talkie_tui.devserver.cuckoo.database import HubDatabase

LIVE = "deleted_at IS NULL"


def decode_media(row: Row | None) -> Row | None:
    """A media row with its waveform parsed and flags as booleans."""
    if row is not None:
        row["waveform"] = json.loads(row["waveform"]) if row["waveform"] else None
        row["has_thumbnail"] = bool(row["has_thumbnail"])
    return row


class MediaStore(HubDatabase):
    """The media table (part of `Storage`)."""

    def add_media(self, row: Row) -> Row:
        """Insert a media record and return it."""
        values = {**row, "waveform": json.dumps(row["waveform"]) if row["waveform"] else None}
        values["has_thumbnail"] = int(bool(row["has_thumbnail"]))
        with self._transaction() as db:
            db.execute(
                "INSERT INTO media (id, owner_kind, owner_id, kind, mime_type, byte_size,"
                " file_name, width, height, has_thumbnail, duration_ms, waveform, created_at)"
                " VALUES (:id, :owner_kind, :owner_id, :kind, :mime_type, :byte_size,"
                " :file_name, :width, :height, :has_thumbnail, :duration_ms, :waveform,"
                " :created_at)",
                values,
            )
        media = self.get_media(row["id"])
        assert media is not None
        return media

    def get_media(self, media_id: str) -> Row | None:
        """A live media record, or None."""
        return decode_media(self._one(f"SELECT * FROM media WHERE id = ? AND {LIVE}", media_id))  # noqa: S608

    def attach_media(self, media_ids: list[str], conversation_id: str, message_id: str) -> None:
        """Mark files as sent in a message."""
        with self._transaction() as db:
            db.executemany(
                "UPDATE media SET conversation_id = ?, message_id = ? WHERE id = ?",
                [(conversation_id, message_id, media_id) for media_id in media_ids],
            )

    def used_bytes(self, owner_id: str) -> int:
        """Bytes of an owner's files that still belong to a live message."""
        row = self._one(
            f"SELECT COALESCE(SUM(byte_size), 0) AS n FROM media WHERE owner_id = ? AND {LIVE}"  # noqa: S608
            " AND message_id IS NOT NULL",
            owner_id,
        )
        return int(row["n"]) if row else 0

    def sent_media_oldest_first(self, owner_id: str) -> list[Row]:
        """An owner's live sent files, oldest first."""
        return self._all(
            f"SELECT id, byte_size FROM media WHERE owner_id = ? AND {LIVE}"  # noqa: S608
            " AND message_id IS NOT NULL ORDER BY created_at",
            owner_id,
        )

    def media_owners(self) -> list[Row]:
        """Every owner with live sent files, and its kind."""
        return self._all(
            f"SELECT DISTINCT owner_kind, owner_id FROM media WHERE {LIVE}"  # noqa: S608
            " AND message_id IS NOT NULL"
        )

    def stale_media(self, unsent_before: str) -> list[str]:
        """Files never sent and uploaded before `unsent_before`, or whose message is gone."""
        rows = self._all(
            f"SELECT id FROM media WHERE {LIVE} AND ((message_id IS NULL AND created_at < ?)"  # noqa: S608
            " OR (message_id IS NOT NULL AND message_id NOT IN (SELECT id FROM messages)))",
            unsent_before,
        )
        return [str(row["id"]) for row in rows]

    def live_media_among(self, media_ids: list[str]) -> set[str]:
        """Which of these ids have a live media row."""
        found: set[str] = set()
        for start in range(0, len(media_ids), 500):  # within SQLite's bound-parameter limit
            batch = media_ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._all(f"SELECT id FROM media WHERE {LIVE} AND id IN ({marks})", *batch)  # noqa: S608
            found.update(str(row["id"]) for row in rows)
        return found

    def delete_media(self, media_ids: list[str], now: str) -> None:
        """Mark files deleted (their bytes are removed by the caller)."""
        with self._transaction() as db:
            db.executemany(
                "UPDATE media SET deleted_at = ? WHERE id = ?",
                [(now, media_id) for media_id in media_ids],
            )
