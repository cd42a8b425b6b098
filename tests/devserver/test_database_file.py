"""Where a reference server keeps its database and files when no --db is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from talkie_tui.devserver.common.sqlite import database_file
from talkie_tui.devserver.cuckoo.config import HubConfig


def test_the_default_database_lives_in_talkie_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TALKIE_HOME", str(tmp_path / "home"))
    config = HubConfig()
    assert config.resolved_db_path() == tmp_path / "home" / "cuckoo-hub.sqlite3"
    assert config.resolved_data_dir() == tmp_path / "home" / "cuckoo-hub-media"


def test_a_chosen_database_is_used_as_given(tmp_path: Path) -> None:
    assert database_file(tmp_path / "x.db", tmp_path / "default.db") == tmp_path / "x.db"
