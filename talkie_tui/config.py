"""Where talkie keeps its files, the user's settings (TOML) and the servers they connected to.

Everything lives in the platform's usual folders (platformdirs), or in one folder named by the
environment variable `TALKIE_HOME` (tests point it at a temporary directory). This module knows
nothing of Textual or of the wire protocol: a server to remember is anything shaped like
`protocol.manifest.DiscoveredServer` (see `ServerLike`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import tomllib
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import platformdirs

from talkie_tui.i18n import LANGUAGE_SETTINGS, N_, _

__all__ = [
    "APP_NAME",
    "DEFAULT_CLIENT_ID",
    "GATEWAY_TOKEN_ENV",
    "HOME_ENV",
    "HUB_TOKEN_ENV",
    "TOKEN_ENV",
    "TOKEN_STORAGES",
    "KnownServer",
    "KnownServers",
    "ServerLike",
    "Settings",
    "config_dir",
    "data_dir",
    "default_downloads_dir",
    "development_token",
    "ensure_private_dir",
    "gateway_token",
    "hub_token",
    "known_servers_path",
    "settings_path",
    "state_dir",
    "write_private_file",
]

APP_NAME = "talkie"
HOME_ENV = "TALKIE_HOME"
TOKEN_ENV = "TALKIE_TOKEN"  # noqa: S105 (the variable's name, not a token)
GATEWAY_TOKEN_ENV = "MINARA_TOKEN"  # noqa: S105 (the variable's name, not a token)
HUB_TOKEN_ENV = "CUCKOO_TOKEN"  # noqa: S105 (the variable's name, not a token)
SETTINGS_FILE = "config.toml"
KNOWN_SERVERS_FILE = "servers.json"
_KNOWN_SERVERS_VERSION = 1
TOKEN_STORAGES = ("keyring", "file", "session")
# The Client ID Metadata Document of this client (the copy in the repo: oauth/client.json).
DEFAULT_CLIENT_ID = "https://talkie.firemni-crm.cz/oauth/terminal.json"


def development_token(given: str | None = None) -> str | None:
    """The development token (§2.2) to use: `given` (`--token`) wins over $TALKIE_TOKEN.

    Surrounding whitespace is dropped (a token read from a file keeps its newline otherwise),
    and an empty value is no token, so `--token ""` falls back to the variable; None when
    neither gives one.
    """
    return _first_token(given, os.environ.get(TOKEN_ENV))


def gateway_token(given: str | None = None) -> str | None:
    """A Minara gateway's token to use: `given` (`--token`) wins over $MINARA_TOKEN (the
    value the gateway was started with as GATEWAY_AUTH_TOKEN); None when neither gives one."""
    return _first_token(given, os.environ.get(GATEWAY_TOKEN_ENV))


def hub_token(given: str | None = None) -> str | None:
    """A Cuckoo hub's session token to use: `given` (`--token`) wins over $CUCKOO_TOKEN; None
    when neither gives one (the sign-in kept for the hub is used then)."""
    return _first_token(given, os.environ.get(HUB_TOKEN_ENV))


def _first_token(*values: str | None) -> str | None:
    """The first value that holds a token, without surrounding whitespace."""
    for value in values:
        token = (value or "").strip()
        if token:
            return token
    return None


# --- where files live ----------------------------------------------------------------------


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


# --- settings --------------------------------------------------------------------------------

# A Textual key name such as "ctrl+j", "shift+enter" or "alt+enter"; checked loosely here,
# since this layer must not import Textual to know every key name.
_KEY = re.compile(r"^[a-z0-9_]+(\+[a-z0-9_]+)*$")


@dataclass
class Settings:
    """The user's preferences from `config.toml`; every field has a working default.

    `newline_key` is the key that inserts a newline in the composer (Enter sends). The default
    `ctrl+j` works in every terminal; `shift+enter` only where the terminal reports it.
    """

    theme: str | None = None
    newline_key: str = "ctrl+j"
    show_sidebar: bool = True
    allow_private_http: bool = False
    downloads_dir: Path = field(default_factory=default_downloads_dir)
    token_storage: str = "keyring"  # noqa: S105 - the name of a store, not a secret
    """Where sign-in tokens are kept: "keyring" (the system's), "file" (a 0600 file in the
    config folder) or "session" (memory only: sign in on every run)."""
    oauth_client_id: str = DEFAULT_CLIENT_ID
    """The URL of the OAuth Client ID Metadata Document this build signs in as (forks change it)."""
    audio_input: str | None = None
    """The microphone: a device name (or a unique part of it) or index; None for the default."""
    audio_output: str | None = None
    """The speaker, likewise."""
    half_duplex: bool = False
    """Mute the microphone while the assistant speaks (laptop speakers: no echo to the model)."""
    dev_tokens: bool = False
    """Development switch (§2.2): offer to paste a bearer token when the server allows it."""
    language: str = "auto"
    """The UI language: "en", "cs", or "auto" (the system's, else the server's, else English)."""
    warnings: list[str] = field(default_factory=list, compare=False)
    """Problems found while reading the file, in words for the user; never fatal."""

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        """Read the settings; a missing file gives defaults, a broken one defaults plus warnings."""
        path = path or settings_path()
        try:
            with path.open("rb") as file:
                data = tomllib.load(file)
        except FileNotFoundError:
            return cls()
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            text = _("{path} could not be read ({error}); using the default settings.")
            return cls(warnings=[text.format(path=path, error=error)])
        return cls.from_mapping(data, source=str(path))

    @classmethod
    def from_mapping(cls, data: dict[str, Any], *, source: str = "config.toml") -> Settings:
        """Build settings from decoded TOML, keeping each valid field and reporting the rest."""
        settings = cls()
        known = {f.name for f in fields(cls)} - {"warnings"}
        for key, value in data.items():
            if key not in known:
                text = _("{source}: unknown setting '{key}' ignored.")
                settings.warnings.append(text.format(source=source, key=key))
                continue
            problem = settings._set(key, value)
            if problem:
                text = _("{source}: {key} {problem}; the default is used.")
                settings.warnings.append(text.format(source=source, key=key, problem=problem))
        return settings

    def _set(self, key: str, value: object) -> str | None:
        """Set one field from TOML; returns what is wrong with the value, or None."""
        if key in ("show_sidebar", "allow_private_http", "dev_tokens", "half_duplex"):
            if not isinstance(value, bool):
                return _("must be true or false")
            setattr(self, key, value)
        elif key == "theme":
            if not isinstance(value, str) or not value.strip():
                return _("must be the name of a theme")
            self.theme = value.strip()
        elif key == "newline_key":
            if not isinstance(value, str) or not _KEY.match(value.strip().lower()):
                return _('must be a key name such as "ctrl+j"')
            self.newline_key = value.strip().lower()
        elif key in ("audio_input", "audio_output"):
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                value = str(value)
            if not isinstance(value, str) or not value.strip():
                return _("must be a device name or number (see `talkie devices`)")
            setattr(self, key, value.strip())
        elif key == "token_storage":
            if value not in TOKEN_STORAGES:
                return _one_of(TOKEN_STORAGES)
            self.token_storage = str(value)
        elif key == "language":
            if value not in LANGUAGE_SETTINGS:
                return _one_of(LANGUAGE_SETTINGS)
            self.language = str(value)
        elif key == "oauth_client_id":
            if not isinstance(value, str) or not value.startswith("https://"):
                return _("must be the https:// URL of a Client ID Metadata Document")
            self.oauth_client_id = value.strip()
        elif key == "downloads_dir":
            if not isinstance(value, str) or not value.strip():
                return _("must be a folder path")
            self.downloads_dir = Path(value).expanduser()
        return None


def _one_of(names: tuple[str, ...]) -> str:
    return _("must be one of {names}").format(names=", ".join(f'"{name}"' for name in names))


# --- known servers ---------------------------------------------------------------------------


class _ManifestLike(Protocol):
    @property
    def name(self) -> str: ...


class ServerLike(Protocol):
    """What `KnownServers.remember` reads from a discovered server (a `DiscoveredServer`)."""

    @property
    def server_id(self) -> str: ...

    @property
    def manifest(self) -> _ManifestLike: ...

    manifest_url: str
    origin: str


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class KnownServer:
    """A server the user connected to, keyed by its `serverId`."""

    server_id: str
    address: str
    manifest_url: str = ""
    name: str = ""
    origin: str = ""
    accepted_origins: list[str] = field(default_factory=list)
    """Origins of endpoints on another site that the user accepted (§1)."""
    last_used: str = ""
    """When the user last connected, ISO 8601 in UTC."""
    signed_in: bool = False
    protocol: str = "talkie"
    """What it speaks ("talkie", "minara"…): connecting again goes straight to it."""

    @classmethod
    def from_json(cls, server_id: str, raw: object) -> KnownServer | None:
        """One entry of the file, or None when it is unusable."""
        if not isinstance(raw, dict) or not isinstance(raw.get("address"), str):
            return None

        def text(key: str) -> str:
            value = raw.get(key)
            return value if isinstance(value, str) else ""

        origins = raw.get("accepted_origins")
        return cls(
            server_id=server_id,
            address=raw["address"],
            manifest_url=text("manifest_url"),
            name=text("name"),
            origin=text("origin"),
            accepted_origins=sorted(
                {o for o in origins if isinstance(o, str)} if isinstance(origins, list) else ()
            ),
            last_used=text("last_used"),
            signed_in=raw.get("signed_in") is True,
            protocol=text("protocol") or "talkie",
        )

    def to_json(self) -> dict[str, Any]:
        """The entry as stored (without its key)."""
        data = asdict(self)
        del data["server_id"]
        return data

    @property
    def label(self) -> str:
        """The server's name, or its address when the name is unknown."""
        return self.name or self.address


class KnownServers:
    """The servers the user connected to, persisted as JSON in the data folder.

    Every change re-reads the file before writing it back, so two talkie windows do not undo
    each other's changes; each write is atomic and private (0600).
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or known_servers_path()
        self._servers: dict[str, KnownServer] = {}
        # (message, values): worded when read, since the file is read before the UI language
        # is chosen.
        self._problems: list[tuple[str, dict[str, str]]] = []

    @property
    def warnings(self) -> list[str]:
        """Problems found while reading the file, in words for the user; never fatal."""
        return [_(message).format(**values) for message, values in self._problems]

    @classmethod
    def load(cls, path: Path | None = None) -> KnownServers:
        """The known servers stored at `path` (default: the data folder); never raises."""
        known = cls(path)
        known.reload()
        return known

    def reload(self) -> None:
        """Read the file again; a broken file yields no servers and a warning."""
        self._problems = []
        path = str(self.path)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self._servers = {}
            return
        except (OSError, ValueError) as error:
            self._servers = {}
            message = N_("{path} could not be read ({error}); starting empty.")
            self._problems.append((message, {"path": path, "error": str(error)}))
            return
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict):
            self._servers = {}
            message = N_("{path} is not a list of servers; starting empty.")
            self._problems.append((message, {"path": path}))
            return
        self._servers = {}
        for server_id, raw in servers.items():
            entry = KnownServer.from_json(server_id, raw)
            if entry is None:
                message = N_("{path}: the entry '{server_id}' is unusable.")
                self._problems.append((message, {"path": path, "server_id": server_id}))
            else:
                self._servers[server_id] = entry

    def _save(self) -> None:
        document = {
            "version": _KNOWN_SERVERS_VERSION,
            "servers": {sid: entry.to_json() for sid, entry in self._servers.items()},
        }
        write_private_file(self.path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")

    def all(self) -> list[KnownServer]:
        """Every known server, most recently used first."""
        return sorted(self._servers.values(), key=lambda s: s.last_used, reverse=True)

    def get(self, server_id: str) -> KnownServer | None:
        """The entry of one server, if known."""
        return self._servers.get(server_id)

    def find(self, address: str) -> KnownServer | None:
        """The entry whose typed address, origin or manifest URL is `address`, if any."""
        wanted = address.strip().rstrip("/")
        for entry in self.all():
            candidates = (entry.address, entry.origin, entry.manifest_url)
            if wanted in (c.rstrip("/") for c in candidates if c):
                return entry
        return None

    def remember(self, server: ServerLike, address: str) -> KnownServer:
        """Record a successful connection to a Talkie server (name, where it lives, when)."""
        return self.remember_server(
            server.server_id,
            address,
            name=server.manifest.name,
            origin=server.origin,
            manifest_url=server.manifest_url,
        )

    def remember_server(
        self,
        server_id: str,
        address: str,
        *,
        name: str,
        origin: str,
        protocol: str = "talkie",
        manifest_url: str = "",
    ) -> KnownServer:
        """Record a successful connection to a server of any protocol, keeping accepted origins."""
        self.reload()
        previous = self._servers.get(server_id)
        entry = KnownServer(
            server_id=server_id,
            address=address.strip(),
            manifest_url=manifest_url,
            name=name,
            origin=origin,
            accepted_origins=previous.accepted_origins if previous else [],
            last_used=_now_iso(),
            signed_in=previous.signed_in if previous else False,
            protocol=protocol,
        )
        self._servers[server_id] = entry
        self._save()
        return entry

    def accept_origins(self, server_id: str, origins: set[str] | list[str]) -> None:
        """Remember that the user accepted endpoints on these origins for this server."""
        self.reload()
        entry = self._servers.get(server_id)
        if entry is None:
            # Accepted before the first successful connection finished: keep the choice anyway.
            entry = self._servers[server_id] = KnownServer(server_id=server_id, address="")
        entry.accepted_origins = sorted(set(entry.accepted_origins) | set(origins))
        self._save()

    def accepted_origins(self, server_id: str) -> set[str]:
        """The foreign origins the user accepted for this server."""
        entry = self._servers.get(server_id)
        return set(entry.accepted_origins) if entry else set()

    def set_signed_in(self, server_id: str, signed_in: bool) -> None:
        """Record whether the user is signed in to this server (shown in lists, never a secret)."""
        self.reload()
        entry = self._servers.get(server_id)
        if entry is not None and entry.signed_in != signed_in:
            entry.signed_in = signed_in
            self._save()

    def forget(self, server_id: str) -> bool:
        """Remove a server and everything remembered about it; True when it was known."""
        self.reload()
        if self._servers.pop(server_id, None) is None:
            return False
        self._save()
        return True

    def __len__(self) -> int:
        return len(self._servers)

    def __contains__(self, server_id: object) -> bool:
        return server_id in self._servers
