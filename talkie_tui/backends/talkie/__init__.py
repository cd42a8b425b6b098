"""The talkie/1 backend: `TalkieBackend` over a `TalkieClient`, its chat sessions and reducer.

Signing in to a Talkie server (OAuth, a development token, the manifest's foreign endpoints)
is `sign_in.TalkieSignIn`, one of the protocols' `backends.signing.SignIn`s; the names below
are for it, for `talkie login` and for the tests.

The names are imported on first use: `discovery.connect_client` must be importable without
the talkie/1 client and AG-UI, which a gateway or a hub never needs (issue 24).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from talkie_tui.core.lazy import names_on_first_use

if TYPE_CHECKING:
    from talkie_tui.backends.talkie.backend import TalkieBackend, server_info
    from talkie_tui.protocol.talkie.client import TalkieClient
    from talkie_tui.protocol.talkie.manifest import DiscoveredServer

__all__ = ["DiscoveredServer", "TalkieBackend", "TalkieClient", "server_info"]

_HOMES = {
    "DiscoveredServer": "talkie_tui.protocol.talkie.manifest",
    "TalkieBackend": "talkie_tui.backends.talkie.backend",
    "TalkieClient": "talkie_tui.protocol.talkie.client",
    "server_info": "talkie_tui.backends.talkie.backend",
}


__getattr__ = names_on_first_use(__name__, _HOMES)
