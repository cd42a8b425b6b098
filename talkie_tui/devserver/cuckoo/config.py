"""Settings of the reference Cuckoo hub: every timing and bound is a field so tests shorten it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from talkie_tui.config.paths import data_dir as talkie_data_dir
from talkie_tui.devserver.common.sqlite import database_file, folder_beside

MIB = 1024 * 1024
DAY = 86_400.0


@dataclass
class HubConfig:
    """What `create_app` and the runner need."""

    host: str = "127.0.0.1"
    port: int = 0
    db_path: Path | None = None
    # Media bytes; None: a folder beside the database.
    data_dir: Path | None = None
    # Development mode: the `X-Dev-User` header, sign-in codes in the log, webhooks to loopback
    # and private addresses.
    dev: bool = False
    # The key of message signatures (64 hex chars); None: one made once and kept in the db.
    signing_key: str | None = field(default=None, repr=False)
    # Called with (email, code) for every sign-in code (there is no mail; tests read codes here).
    code_sink: Callable[[str, str], None] | None = field(default=None, repr=False)

    # uvicorn's C parts (`httptools` for HTTP/1.1, `uvloop` for the event loop) instead of
    # pure-Python h11 and asyncio's loop: the hub's own HTTP and socket work costs much less.
    speedups: bool = True

    # Delivery: a pushed event not acknowledged within `lease_seconds` is due again.
    lease_seconds: float = 30.0
    lease_batch: int = 100
    webhook_retry_seconds: tuple[float, ...] = (1.0, 5.0, 30.0, 120.0, 600.0, 3600.0)
    webhook_timeout: float = 10.0
    give_up_seconds: float = DAY
    unreachable_after: float = 300.0
    # Sockets (both kinds): a ping this often, closed when its pong is this late.
    ping_interval: float = 30.0
    pong_timeout: float = 15.0
    max_frame_bytes: int = 64 * 1024
    # Streams: finished as truncated when idle this long, finished when open this long.
    stream_idle_seconds: float = 30.0
    stream_max_seconds: float = 300.0
    max_text_chars: int = 8000
    # An activity (or typing) indicator shows this long unless renewed.
    typing_seconds: float = 10.0

    # Retention and budgets.
    retention_seconds: float = 90 * DAY
    person_media_budget: int = 100 * 1000 * 1000
    agent_media_budget: int = 1000 * 1000 * 1000
    unsent_upload_seconds: float = DAY
    # Streams left open and socket agents nobody can reach are checked this often; retention,
    # budgets, unsent uploads, given-up events and old delivery records every `sweep_interval`.
    stream_sweep_interval: float = 5.0
    sweep_interval: float = 6 * 3600.0
    delivery_record_seconds: float = 7 * DAY

    # Sign-in.
    session_seconds: float = 90 * DAY
    max_devices: int = 10
    code_seconds: float = 600.0
    code_attempts: int = 5

    # Rates (per second, burst) per sender.
    person_send_rate: tuple[float, int] = (0.5, 30)
    agent_send_rate: tuple[float, int] = (60.0, 120)
    delta_rate: tuple[float, int] = (200.0, 400)
    activity_rate: tuple[float, int] = (200.0, 400)
    upload_rate: tuple[float, int] = (5.0, 40)
    person_upload_rate: tuple[float, int] = (0.5, 20)
    code_rate: tuple[float, int] = (1 / 120, 5)

    max_body_bytes: int = MIB
    image_max_bytes: int = 16 * MIB
    audio_max_bytes: int = 16 * MIB
    video_max_bytes: int = 64 * MIB
    file_max_bytes: int = 64 * MIB
    image_max_pixels: int = 50_000_000

    def resolved_db_path(self) -> Path:
        """The SQLite file to use: `db_path`, or one in the user data directory."""
        return database_file(self.db_path, talkie_data_dir() / "cuckoo-hub.sqlite3")

    def resolved_data_dir(self) -> Path:
        """The folder of media bytes: `data_dir`, or `<db stem>-media` beside the database."""
        return folder_beside(self.data_dir, self.resolved_db_path(), "media")

    def max_bytes_of(self, kind: str) -> int:
        """The size limit of a file of this kind."""
        return {
            "image": self.image_max_bytes,
            "audio": self.audio_max_bytes,
            "video": self.video_max_bytes,
        }.get(kind, self.file_max_bytes)
