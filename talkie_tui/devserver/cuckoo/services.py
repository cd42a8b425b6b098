"""The long-lived parts of a running hub, made in its lifespan, and its background tasks."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.cuckoo import signing, sweeper
from talkie_tui.devserver.cuckoo.chat import Chat
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.conversations import Conversations
from talkie_tui.devserver.cuckoo.live import AgentLinks, ClientFeeds
from talkie_tui.devserver.cuckoo.media import MediaFiles
from talkie_tui.devserver.cuckoo.outbox import Outbox
from talkie_tui.devserver.cuckoo.rates import RateLimiter
from talkie_tui.devserver.cuckoo.schedules import Schedules
from talkie_tui.devserver.cuckoo.storage import Storage
from talkie_tui.devserver.cuckoo.webhooks import WebhookSender

logger = logging.getLogger(__name__)


class Hub:
    """Configuration, storage, who is connected, and the services built on them."""

    def __init__(self, config: HubConfig) -> None:
        self.config = config
        self.storage = Storage(config.resolved_db_path())
        self.signing_key = self._signing_key()
        self.limiter = RateLimiter()
        self.feeds = ClientFeeds(self.storage.after_commit)
        self.links = AgentLinks()
        self.media = MediaFiles(config)
        self.outbox = Outbox(self)
        self.webhooks = WebhookSender(self)
        self.conversations = Conversations(self)
        self.chat = Chat(self)
        self.schedules = Schedules(self)
        self._tasks: list[asyncio.Task[None]] = []
        self.loop: asyncio.AbstractEventLoop | None = None

    def _signing_key(self) -> str:
        if self.config.signing_key:
            return self.config.signing_key
        if self.config.dev:
            return signing.DEV_KEY
        key = self.storage.get_meta(signing.META_NAME)
        if key is None:
            key = signing.make_key()
            self.storage.set_meta(signing.META_NAME, key)
        return key

    def start(self) -> None:
        """Start the sweeper and the webhook sender (inside the server's event loop)."""
        self.loop = asyncio.get_running_loop()
        self.storage.release_socket_leases(clock.iso(clock.now()))
        self._tasks = [
            asyncio.create_task(sweeper.run(self), name="cuckoo-sweeper"),
            asyncio.create_task(self.webhooks.run(), name="cuckoo-webhooks"),
        ]

    def stop_sockets(self) -> None:
        """Close every socket: agents hear 1012 (the hub is restarting)."""
        self.links.close_all(1012, "the hub is restarting")
        self.feeds.end_all()

    async def close(self) -> None:
        """Stop the tasks and close the database."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.storage.close()
