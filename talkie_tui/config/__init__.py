"""Where talkie keeps its files, the user's settings (TOML) and the servers they connected to.

Everything lives in the platform's usual folders (platformdirs), or in one folder named by the
environment variable `TALKIE_HOME` (tests point it at a temporary directory). This package knows
nothing of Textual or of the wire protocol: a server to remember is anything shaped like
`protocol.manifest.DiscoveredServer` (see `ServerLike`). Its parts: `paths`, `settings`,
`known_servers`, `tokens`; their names are imported from here, each on first use: `talkie ask
--token T` reads a token variable and never the files (issue 24).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from talkie_tui.core.lazy import names_on_first_use

if TYPE_CHECKING:
    from talkie_tui.config.known_servers import KnownServer, KnownServers, ServerLike
    from talkie_tui.config.paths import (
        APP_NAME,
        HOME_ENV,
        config_dir,
        data_dir,
        default_downloads_dir,
        ensure_private_dir,
        known_servers_path,
        load_logo,
        logo_path,
        save_logo,
        settings_path,
        state_dir,
        write_private_file,
    )
    from talkie_tui.config.settings import DEFAULT_CLIENT_ID, TOKEN_STORAGES, Settings
    from talkie_tui.config.tokens import (
        GATEWAY_TOKEN_ENV,
        HUB_TOKEN_ENV,
        TOKEN_ENV,
        development_token,
        gateway_token,
        hub_token,
    )

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
    "load_logo",
    "logo_path",
    "save_logo",
    "settings_path",
    "state_dir",
    "write_private_file",
]

_HOMES = {
    "APP_NAME": "talkie_tui.config.paths",
    "DEFAULT_CLIENT_ID": "talkie_tui.config.settings",
    "GATEWAY_TOKEN_ENV": "talkie_tui.config.tokens",
    "HOME_ENV": "talkie_tui.config.paths",
    "HUB_TOKEN_ENV": "talkie_tui.config.tokens",
    "TOKEN_ENV": "talkie_tui.config.tokens",
    "TOKEN_STORAGES": "talkie_tui.config.settings",
    "KnownServer": "talkie_tui.config.known_servers",
    "KnownServers": "talkie_tui.config.known_servers",
    "ServerLike": "talkie_tui.config.known_servers",
    "Settings": "talkie_tui.config.settings",
    "config_dir": "talkie_tui.config.paths",
    "data_dir": "talkie_tui.config.paths",
    "default_downloads_dir": "talkie_tui.config.paths",
    "development_token": "talkie_tui.config.tokens",
    "ensure_private_dir": "talkie_tui.config.paths",
    "gateway_token": "talkie_tui.config.tokens",
    "hub_token": "talkie_tui.config.tokens",
    "known_servers_path": "talkie_tui.config.paths",
    "load_logo": "talkie_tui.config.paths",
    "logo_path": "talkie_tui.config.paths",
    "save_logo": "talkie_tui.config.paths",
    "settings_path": "talkie_tui.config.paths",
    "state_dir": "talkie_tui.config.paths",
    "write_private_file": "talkie_tui.config.paths",
}


__getattr__ = names_on_first_use(__name__, _HOMES)
