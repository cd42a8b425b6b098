"""Finding out whether an address is a Talkie server, importing talkie/1's client only if so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from talkie_tui.protocol.talkie.manifest import ManifestCache, discover_address

if TYPE_CHECKING:
    from talkie_tui.core.tokens import TokenSource
    from talkie_tui.protocol.talkie.client import TalkieClient

__all__ = ["connect_client"]


async def connect_client(
    address: str,
    *,
    tokens: TokenSource | None = None,
    allow_private_http: bool = False,
    accepted_origins: set[str] | None = None,
) -> TalkieClient:
    """`TalkieClient.connect`, with the client (and AG-UI under it) imported only once the
    address has a manifest: an address that is a Minara gateway or a Cuckoo hub imports
    neither on its way to its own backend."""
    cache = ManifestCache()
    server, http, own_http = await discover_address(
        address,
        cache=cache,
        allow_private_http=allow_private_http,
        accepted_origins=accepted_origins,
    )
    from talkie_tui.protocol.talkie.client import TalkieClient

    return TalkieClient(server, tokens=tokens, http=http, cache=cache, close_http=own_http)
