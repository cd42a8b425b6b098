"""The servers the user connected to (`servers.json`), keyed by their `serverId`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from talkie_tui.config.paths import known_servers_path, write_private_file
from talkie_tui.i18n import N_, _

_KNOWN_SERVERS_VERSION = 1


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
