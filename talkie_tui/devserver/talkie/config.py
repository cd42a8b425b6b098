"""Settings of the reference server."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from talkie_tui.config.paths import data_dir as talkie_data_dir
from talkie_tui.devserver.common.sqlite import database_file


@dataclass
class ServerConfig:
    """Everything `create_app` and the runner need to know."""

    host: str = "127.0.0.1"
    port: int = 0
    test_mode: bool = False
    dev_token: str | None = None
    db_path: Path | None = None
    oauth_issuer: str | None = None
    # RFC 7662 introspection credentials of this server at the issuer; without them only the
    # dev token is accepted. The secret stays out of repr so it never reaches a log.
    oauth_client_id: str | None = None
    oauth_client_secret: str | None = field(default=None, repr=False)
    # When set, an access token's `aud` must contain it.
    oauth_audience: str | None = None
    # The fake realtime voice provider (aiortc, on 127.0.0.1) and the §10 voice endpoints.
    fake_voice: bool = False
    # A JSON script for the fake provider (`fake_voice/script.py`); None: the built-in demo.
    fake_voice_script: Path | None = None
    voice_max_seconds: int = 900
    voice_warn_seconds: int = 60
    # How long a voice session's client secret opens a provider call (it works once).
    voice_secret_seconds: float = 60.0
    ping_interval: float = 15.0
    undo_seconds: float = 10.0
    action_ttl_seconds: float = 600.0
    max_message_chars: int = 4000
    # The manifest's `locale`: the language the server's agent speaks (clients may follow it).
    locale: str = "en"
    manifest_max_age: int = 3600
    slow_seconds: float = 5.0
    demo_agent: bool = True
    demo_delay: float = 0.02

    def resolved_db_path(self) -> Path:
        """The SQLite file to use: `db_path`, or one in the user data directory."""
        return database_file(self.db_path, talkie_data_dir() / "devserver.sqlite3")
