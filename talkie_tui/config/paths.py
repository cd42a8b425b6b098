"""Where talkie keeps its files: the platform's usual folders (platformdirs), or one folder named
by `TALKIE_HOME`; files written private and whole."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

import platformdirs

APP_NAME = "talkie"
HOME_ENV = "TALKIE_HOME"
SETTINGS_FILE = "config.toml"
KNOWN_SERVERS_FILE = "servers.json"


def _home() -> Path | None:
    value = os.environ.get(HOME_ENV, "").strip()
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    """The folder of `config.toml` (`TALKIE_HOME` when set)."""
    return _home() or platformdirs.user_config_path(APP_NAME, appauthor=False)


def data_dir() -> Path:
    """The folder of durable data such as the known servers (`TALKIE_HOME` when set)."""
    return _home() or platformdirs.user_data_path(APP_NAME, appauthor=False)


def state_dir() -> Path:
    """The folder of disposable state such as logs and drafts (`TALKIE_HOME` when set)."""
    return _home() or platformdirs.user_state_path(APP_NAME, appauthor=False)


def default_downloads_dir() -> Path:
    """Where downloaded files go unless the settings say otherwise."""
    home = _home()
    # Under TALKIE_HOME even downloads stay inside it, so a test never writes to the real home.
    return home / "downloads" if home else platformdirs.user_downloads_path()


def settings_path() -> Path:
    """The settings file, `config.toml`."""
    return config_dir() / SETTINGS_FILE


def known_servers_path() -> Path:
    """The JSON file of known servers."""
    return data_dir() / KNOWN_SERVERS_FILE


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) if missing; folders talkie creates are private (0700)."""
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def write_private_file(path: Path, text: str | bytes) -> None:
    """Replace `path` atomically with `text`, readable and writable by the user only (0600)."""
    ensure_private_dir(path.parent)
    # mkstemp creates the file with mode 0600; os.replace makes the swap atomic, so a crash
    # or a second talkie process never sees half a file.
    descriptor, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def logo_path(server_id: str) -> Path:
    """Where the brand logo of a server is cached (the name is a hash: ids are server text)."""
    digest = hashlib.sha256(server_id.encode("utf-8")).hexdigest()[:24]
    return data_dir() / "logos" / digest


def save_logo(server_id: str, data: bytes) -> None:
    """Cache a server's logo (already checked by the UI) for the connect screen."""
    with contextlib.suppress(OSError):
        write_private_file(logo_path(server_id), data)


def load_logo(server_id: str) -> bytes | None:
    """A cached logo, or None."""
    try:
        return logo_path(server_id).read_bytes()
    except OSError:
        return None
