"""Where talkie keeps its files, the user's settings (TOML) and the servers they connected to.

Everything lives in the platform's usual folders (platformdirs), or in one folder named by the
environment variable `TALKIE_HOME` (tests point it at a temporary directory). This package knows
nothing of Textual or of the wire protocol: a server to remember is anything shaped like
`protocol.manifest.DiscoveredServer` (see `ServerLike`). Its parts: `paths`, `settings`,
`known_servers`, `tokens`; their names are imported from here.
"""

from __future__ import annotations

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
