"""The user's settings, read from `config.toml`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from talkie_tui.config.paths import default_downloads_dir, settings_path
from talkie_tui.i18n import LANGUAGE_SETTINGS, _

# The Client ID Metadata Document of this client (the copy in the repo: oauth/client.json).
DEFAULT_CLIENT_ID = "https://talkie.firemni-crm.cz/oauth/terminal.json"
TOKEN_STORAGES = ("keyring", "file", "session")


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
                import tomllib  # only where there is a file: most starts have none (issue 24)

                data = tomllib.load(file)
        except FileNotFoundError:
            return cls()
        # tomllib.TOMLDecodeError and UnicodeDecodeError are the ValueErrors of a broken file.
        except (OSError, ValueError) as error:
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
