"""The talkie/1 backend: `TalkieBackend` over a `TalkieClient`, its chat sessions and reducer.

Connecting and signing in are not part of the `Backend` interface yet: the UI's connect and
sign-in screens still hold a `TalkieClient` and read the `DiscoveredServer` (its manifest's
sign-in offer, its foreign endpoints), so this package hands them on, and `ui/` reaches
talkie/1 only through here. They move behind the backend interface when sign-in does, with the
second and third protocols (issues 12 and 13).
"""

from talkie_tui.protocol.client import TalkieClient
from talkie_tui.protocol.manifest import DiscoveredServer

from .backend import TalkieBackend, server_info

__all__ = ["DiscoveredServer", "TalkieBackend", "TalkieClient", "server_info"]
