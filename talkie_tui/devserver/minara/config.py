"""Settings of the reference Minara gateway."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from talkie_tui.config.paths import data_dir as talkie_data_dir
from talkie_tui.devserver.common.sqlite import database_file, folder_beside

MIB = 1024 * 1024


@dataclass
class GatewayConfig:
    """What `create_app` and the runner need; timings are fields so that tests shorten them."""

    # None: anonymous local requests (GATEWAY_AUTH_TOKEN unset). Kept out of repr (and so logs).
    auth_token: str | None = field(default=None, repr=False)
    db_path: Path | None = None
    # Uploaded files; None: a folder beside the database.
    data_dir: Path | None = None
    test_mode: bool = False
    demo_agent: bool = True
    host: str = "127.0.0.1"
    port: int = 0
    # The socket: a `{"type": "ping"}` this often, closed after this long without a client frame.
    ping_interval: float = 20.0
    idle_timeout: float = 60.0
    max_frame_bytes: int = MIB
    # A session's latest turn stays replayable (`fromSeq`) at least this long after it ended.
    turn_buffer_seconds: float = 300.0
    # Comment lines on the SSE revision's event stream while a turn is silent.
    sse_ping_interval: float = 15.0
    # How long the demo agent's questions stay open (test-mode questions say their own).
    question_seconds: float = 300.0
    # Pauses of the scripts: the test `slow` and `endless` turns, and the demo agent's deltas.
    slow_delay: float = 0.15
    endless_interval: float = 0.2
    demo_delay: float = 0.03
    max_message_chars: int = 20_000
    image_max_bytes: int = 5 * MIB
    file_max_bytes: int = 20 * MIB
    max_attachments: int = 8

    def resolved_db_path(self) -> Path:
        """The SQLite file to use: `db_path`, or one in the user data directory."""
        return database_file(self.db_path, talkie_data_dir() / "minara-gateway.sqlite3")

    def resolved_data_dir(self) -> Path:
        """The folder of uploaded files: `data_dir`, or `<db stem>-files` beside the database."""
        return folder_beside(self.data_dir, self.resolved_db_path(), "files")
