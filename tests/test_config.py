"""config.py: where files live, tolerant settings, and the known-servers file."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from talkie_tui import config
from talkie_tui.config import KnownServers, Settings, known_servers


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TALKIE_HOME in a temporary folder."""
    folder = tmp_path / "talkie-home"
    monkeypatch.setenv("TALKIE_HOME", str(folder))
    return folder


@dataclass
class FakeManifest:
    name: str


@dataclass
class FakeServer:
    """Shaped like protocol.manifest.DiscoveredServer, as far as KnownServers reads it."""

    server_id: str
    manifest: FakeManifest
    manifest_url: str
    origin: str
    accepted_origins: set[str] = field(default_factory=set)


def server(server_id: str = "crm.example.com", name: str = "Example CRM") -> FakeServer:
    origin = f"https://{server_id}"
    return FakeServer(server_id, FakeManifest(name), f"{origin}/.well-known/talkie.json", origin)


# --- paths --------------------------------------------------------------------------------------


def test_talkie_home_holds_everything(home: Path) -> None:
    assert config.config_dir() == home
    assert config.data_dir() == home
    assert config.state_dir() == home
    assert config.default_downloads_dir() == home / "downloads"
    assert config.settings_path() == home / "config.toml"
    assert config.known_servers_path() == home / "servers.json"


def test_platform_folders_without_talkie_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TALKIE_HOME", raising=False)
    assert config.config_dir().name == "talkie"
    assert config.data_dir().name == "talkie"
    assert config.state_dir().name == "talkie"


def test_config_does_not_import_textual_or_rich() -> None:
    code = (
        "import sys, talkie_tui.config; print([m for m in ('textual', 'rich') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "variable", "token"),
    [
        ("from-flag", "from-env", "from-flag"),  # --token wins over TALKIE_TOKEN
        (None, "from-env", "from-env"),
        ("", "from-env", "from-env"),  # an empty --token is no token
        ("  from-flag\n", None, "from-flag"),  # whitespace around it is dropped
        (None, " from-env\n", "from-env"),
        ("  ", "   ", None),
        (None, "", None),
        (None, None, None),
    ],
)
def test_the_development_token_comes_from_the_flag_or_the_environment(
    monkeypatch: pytest.MonkeyPatch, given: str | None, variable: str | None, token: str | None
) -> None:
    if variable is None:
        monkeypatch.delenv(config.TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(config.TOKEN_ENV, variable)
    assert config.TOKEN_ENV == "TALKIE_TOKEN"
    assert config.development_token(given) == token


def test_missing_settings_file_gives_defaults(home: Path) -> None:
    settings = Settings.load()
    assert settings == Settings()
    assert settings.newline_key == "ctrl+j"
    assert settings.show_sidebar is True
    assert settings.allow_private_http is False
    assert settings.theme is None
    assert settings.downloads_dir == home / "downloads"
    assert settings.warnings == []


def test_settings_are_read(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text(
        'theme = "nord"\nnewline_key = "Shift+Enter"\nshow_sidebar = false\n'
        'allow_private_http = true\ndownloads_dir = "~/Talkie files"\n'
    )
    settings = Settings.load()
    assert settings.theme == "nord"
    assert settings.newline_key == "shift+enter"
    assert settings.show_sidebar is False
    assert settings.allow_private_http is True
    assert settings.downloads_dir == Path("~/Talkie files").expanduser()
    assert settings.warnings == []


def test_broken_settings_file_gives_defaults_and_a_warning(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text("theme = [unclosed\n")
    settings = Settings.load()
    assert settings.theme is None and settings.newline_key == "ctrl+j"
    assert len(settings.warnings) == 1
    assert "could not be read" in settings.warnings[0]


def test_wrong_values_keep_the_rest(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text(
        'theme = "gruvbox"\nshow_sidebar = "no"\nnewline_key = "ctrl j!"\ncolour = 1\n'
    )
    settings = Settings.load()
    assert settings.theme == "gruvbox"
    assert settings.show_sidebar is True
    assert settings.newline_key == "ctrl+j"
    text = "\n".join(settings.warnings)
    assert "show_sidebar must be true or false" in text
    assert "newline_key must be a key name" in text
    assert "unknown setting 'colour'" in text


def test_unreadable_bytes_are_a_warning(home: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_bytes(b"theme = '\xff\xfe'\n")
    assert Settings.load().warnings


# --- known servers --------------------------------------------------------------------------


def test_remember_and_reload(home: Path) -> None:
    known = KnownServers.load()
    assert known.all() == []
    entry = known.remember(server(), "crm.example.com")
    assert entry.name == "Example CRM"
    assert entry.manifest_url == "https://crm.example.com/.well-known/talkie.json"
    assert entry.origin == "https://crm.example.com"
    assert entry.signed_in is False and entry.accepted_origins == []
    again = KnownServers.load()
    [stored] = again.all()
    assert stored == entry
    assert again.find("crm.example.com") == entry
    assert again.find("https://crm.example.com/") == entry
    assert again.find("other.example.com") is None


def test_file_and_folder_are_private(home: Path) -> None:
    KnownServers.load().remember(server(), "crm.example.com")
    path = home / "servers.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert [p.name for p in home.iterdir()] == ["servers.json"]  # no temp file left behind
    document = json.loads(path.read_text())
    assert document["version"] == 1
    assert set(document["servers"]["crm.example.com"]) == {
        "address",
        "manifest_url",
        "name",
        "origin",
        "accepted_origins",
        "last_used",
        "signed_in",
        "protocol",
    }
    assert document["servers"]["crm.example.com"]["protocol"] == "talkie"


def test_a_gateway_is_remembered_with_its_protocol(home: Path) -> None:
    known = KnownServers.load()
    known.remember_server(
        "minara:http://localhost:8080",
        "localhost:8080",
        name="Minara gateway",
        origin="http://localhost:8080",
        protocol="minara",
    )
    again = KnownServers.load().get("minara:http://localhost:8080")
    assert again is not None
    assert (again.protocol, again.name, again.address) == (
        "minara",
        "Minara gateway",
        "localhost:8080",
    )


def test_most_recent_first(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stamps = iter(["2026-01-01T10:00:00+00:00", "2026-01-02T10:00:00+00:00"])
    monkeypatch.setattr(known_servers, "_now_iso", lambda: next(stamps))
    known = KnownServers.load()
    known.remember(server("a.example", "A"), "a.example")
    known.remember(server("b.example", "B"), "b.example")
    assert [s.server_id for s in known.all()] == ["b.example", "a.example"]


def test_accepted_origins_are_kept_per_server(home: Path) -> None:
    known = KnownServers.load()
    known.remember(server(), "crm.example.com")
    known.accept_origins("crm.example.com", {"https://voice.example.net"})
    known.accept_origins("crm.example.com", ["https://files.example.org"])
    assert known.accepted_origins("crm.example.com") == {
        "https://voice.example.net",
        "https://files.example.org",
    }
    assert known.accepted_origins("unknown") == set()
    # Remembering the server again (a later connection) keeps the accepted origins.
    known.remember(server(name="Renamed CRM"), "crm.example.com")
    reloaded = KnownServers.load()
    assert reloaded.get("crm.example.com").name == "Renamed CRM"  # type: ignore[union-attr]
    assert len(reloaded.accepted_origins("crm.example.com")) == 2


def test_signed_in_and_forget(home: Path) -> None:
    known = KnownServers.load()
    known.remember(server(), "crm.example.com")
    known.set_signed_in("crm.example.com", True)
    assert KnownServers.load().get("crm.example.com").signed_in is True  # type: ignore[union-attr]
    assert known.forget("crm.example.com") is True
    assert known.forget("crm.example.com") is False
    assert KnownServers.load().all() == []


def test_two_windows_do_not_undo_each_other(home: Path) -> None:
    first, second = KnownServers.load(), KnownServers.load()
    first.remember(server("a.example", "A"), "a.example")
    second.remember(server("b.example", "B"), "b.example")
    assert {s.server_id for s in KnownServers.load().all()} == {"a.example", "b.example"}


@pytest.mark.parametrize(
    "content",
    ["not json", "[1, 2]", '{"servers": 3}'],
)
def test_broken_known_servers_file_starts_empty_with_a_warning(home: Path, content: str) -> None:
    home.mkdir()
    (home / "servers.json").write_text(content)
    known = KnownServers.load()
    assert known.all() == []
    assert known.warnings
    # Saving again repairs the file.
    known.remember(server(), "crm.example.com")
    assert KnownServers.load().warnings == []


def test_unusable_entries_are_skipped(home: Path) -> None:
    home.mkdir()
    (home / "servers.json").write_text(
        json.dumps(
            {
                "servers": {
                    "good": {"address": "good.example", "accepted_origins": ["x", 3]},
                    "bad": {"name": "no address"},
                }
            }
        )
    )
    known = KnownServers.load()
    assert [s.server_id for s in known.all()] == ["good"]
    assert known.accepted_origins("good") == {"x"}
    assert "bad" in known.warnings[0]


def test_a_failed_write_leaves_the_old_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    known = KnownServers.load()
    known.remember(server("a.example", "A"), "a.example")
    before = (home / "servers.json").read_text()

    def fail(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        known.remember(server("b.example", "B"), "b.example")
    assert (home / "servers.json").read_text() == before
    assert [p.name for p in home.iterdir()] == ["servers.json"]
