"""The long-lived parts of a running hub, made in its lifespan, and its background tasks."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.cuckoo import signing
from talkie_tui.devserver.cuckoo.announcer import Announcer
from talkie_tui.devserver.cuckoo.chat import Chat
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.conversations import Conversations
from talkie_tui.devserver.cuckoo.deliveries import DeliveryNews
from talkie_tui.devserver.cuckoo.live import AgentLinks, ClientFeeds
from talkie_tui.devserver.cuckoo.media import MediaFiles
from talkie_tui.devserver.cuckoo.message_forms import MessageForms
from talkie_tui.devserver.cuckoo.outbox import Outbox
from talkie_tui.devserver.cuckoo.presence import Presence
from talkie_tui.devserver.cuckoo.rates import RateLimiter
from talkie_tui.devserver.cuckoo.schedules import Schedules
from talkie_tui.devserver.cuckoo.storage import Storage
from talkie_tui.devserver.cuckoo.streams import Streams
from talkie_tui.devserver.cuckoo.sweeper import Sweeper
from talkie_tui.devserver.cuckoo.webhooks import WebhookSender
from talkie_tui.devserver.cuckoo.writing import Writing

logger = logging.getLogger(__name__)


class Hub:
    """Configuration, storage, who is connected, and the services built on them.

    Each service is handed what it needs here; the two that sit below the ones they tell (the
    outbox waking the webhook sender, conversations showing and ending messages) get callbacks.
    """

    def __init__(self, config: HubConfig) -> None:
        self.config = config
        self.storage = Storage(config.resolved_db_path())
        self.signing_key = self._signing_key()
        self.limiter = RateLimiter()
        self.feeds = ClientFeeds(self.storage.after_commit)
        self.links = AgentLinks()
        self.media = MediaFiles(config)
        storage, config = self.storage, self.config
        self.presence = Presence(storage, self.links, self.feeds)
        self.deliveries = DeliveryNews(storage, self.feeds)
        self.outbox = Outbox(
            storage,
            config,
            self.links,
            self.presence,
            queued=lambda: self.webhooks.wake(),
            delivered=self.deliveries.changed,
        )
        self.webhooks = WebhookSender(storage, config, self.outbox, self.deliveries.changed)
        self.conversations = Conversations(
            storage,
            config,
            self.outbox,
            self.presence,
            message_form=lambda row: self.forms.client_form(row),
            end_stream=lambda row: self.streams.cut_short(row),
        )
        self.schedules = Schedules(storage, self.conversations, self.outbox, self.feeds)
        self.forms = MessageForms(storage, self.conversations, self.schedules)
        self.announcer = Announcer(storage, self.feeds, self.outbox, self.conversations, self.forms)
        writing = Writing(
            storage,
            config,
            self.limiter,
            self.feeds,
            self.signing_key,
            self.conversations,
            self.announcer,
        )
        self.streams = Streams(writing, self.outbox)
        self.chat = Chat(writing, self.schedules)
        self.sweeper = Sweeper(
            config,
            storage,
            self.links,
            self.media,
            self.outbox,
            sweep_streams=self.streams.sweep_streams,
            delivered=self.deliveries.changed,
            window_start=self.conversations.window_start,
        )
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
            asyncio.create_task(self.sweeper.run(), name="cuckoo-sweeper"),
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
