"""What sending and streaming messages share: the stores, the hub's settings and limits, the
people's feeds, the signing key, the conversations' rules and the announcer."""

from __future__ import annotations

from dataclasses import dataclass

from talkie_tui.devserver.cuckoo.announcer import Announcer
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.conversations import Conversations
from talkie_tui.devserver.cuckoo.live import ClientFeeds
from talkie_tui.devserver.cuckoo.rates import RateLimiter
from talkie_tui.devserver.cuckoo.storage import Storage


@dataclass(frozen=True, slots=True)
class Writing:
    """The parts `chat.Chat` and `streams.Streams` write messages with."""

    storage: Storage
    config: HubConfig
    limiter: RateLimiter
    feeds: ClientFeeds
    signing_key: str
    conversations: Conversations
    announcer: Announcer
