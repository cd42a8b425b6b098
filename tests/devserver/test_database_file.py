"""Where a reference server keeps its database and files when no --db is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from talkie_tui.devserver.common.sqlite import database_file, folder_beside


def test_the_default_database_lives_in_talkie_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TALKIE_HOME", str(tmp_path / "home"))
    database = database_file(None, "cuckoo-hub.sqlite3")
    assert database == tmp_path / "home" / "cuckoo-hub.sqlite3"
    assert folder_beside(None, database, "media") == tmp_path / "home" / "cuckoo-hub-media"


def test_a_chosen_database_is_used_as_given(tmp_path: Path) -> None:
    assert database_file(tmp_path / "x.db", "cuckoo-hub.sqlite3") == tmp_path / "x.db"
