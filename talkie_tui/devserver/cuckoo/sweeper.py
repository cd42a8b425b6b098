"""The hub's housekeeping: often, streams left open and socket agents nobody can reach; every
`sweep_interval`, events past their last try, the retention window, media budgets, unsent
uploads and old delivery records."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.live import AgentLinks
from talkie_tui.devserver.cuckoo.media import MediaFiles
from talkie_tui.devserver.cuckoo.outbox import Outbox
from talkie_tui.devserver.cuckoo.storage import Storage

logger = logging.getLogger(__name__)


class Sweeper:
    """The housekeeping task of a hub.

    `sweep_streams` finishes streams left open, `delivered` tells a message's sender its
    delivery changed, `window_start` is the oldest moment the retention window covers.
    """

    def __init__(
        self,
        config: HubConfig,
        storage: Storage,
        links: AgentLinks,
        media: MediaFiles,
        outbox: Outbox,
        *,
        sweep_streams: Callable[[], None],
        delivered: Callable[[str], None],
        window_start: Callable[[], str],
    ) -> None:
        self.config = config
        self.storage = storage
        self.links = links
        self.media = media
        self.outbox = outbox
        self._sweep_streams = sweep_streams
        self._delivered = delivered
        self._window_start = window_start

    def sweep_often(self) -> None:
        """Finish streams left open; a socket agent whose events wait too long is unreachable."""
        self._sweep_streams()
        now = clock.now()
        for binding in self.storage.socket_bindings():
            agent_id = binding["agent_id"]
            if self.links.connected(agent_id):
                continue
            oldest = self.storage.oldest_pending(agent_id)
            if oldest is None:
                continue
            waited = (now - clock.parse_iso(oldest)).total_seconds()
            if waited >= self.config.unreachable_after:
                self.outbox.failed(agent_id, since=oldest)

    def sweep(self) -> None:
        """One round of the slow housekeeping."""
        config = self.config
        now = clock.now()
        given_up = self.storage.give_up(
            clock.iso(clock.later(-config.give_up_seconds, now)), clock.iso(now)
        )
        for event in given_up:
            if event["message_id"]:
                self._delivered(event["message_id"])
        self.storage.delete_messages_before(self._window_start())
        stale = self.storage.stale_media(clock.iso(clock.later(-config.unsent_upload_seconds, now)))
        self._delete_media(stale)
        for owner in self.storage.media_owners():
            budget = (
                config.person_media_budget
                if owner["owner_kind"] == "user"
                else config.agent_media_budget
            )
            self._enforce_budget(owner["owner_id"], budget)
        self.storage.delete_final_events(
            clock.iso(clock.later(-config.delivery_record_seconds, now))
        )
        self._delete_orphans()

    def _delete_orphans(self) -> None:
        """Remove files that have no live row (a crash between write and insert, an older hub).

        An upload writes its file and inserts its row with no await between, on this same loop,
        so a sweep never sees a file whose row is about to come.
        """
        stored = self.media.stored_ids()
        live = self.storage.live_media_among(stored)
        for media_id in stored:
            if media_id not in live:
                self.media.remove(media_id)

    def _enforce_budget(self, owner_id: str, budget: int) -> None:
        used = self.storage.used_bytes(owner_id)
        doomed = []
        for row in self.storage.sent_media_oldest_first(owner_id):
            if used <= budget:
                break
            doomed.append(str(row["id"]))
            used -= int(row["byte_size"])
        self._delete_media(doomed)

    def _delete_media(self, media_ids: list[str]) -> None:
        if not media_ids:
            return
        self.storage.delete_media(media_ids, clock.iso(clock.now()))
        for media_id in media_ids:
            self.media.remove(media_id)

    async def run(self) -> None:
        """Sweep until cancelled (a failed round is logged, and the next one comes anyway)."""
        loop = asyncio.get_running_loop()
        next_full = loop.time()
        while True:
            try:
                self.sweep_often()
                if loop.time() >= next_full:
                    next_full = loop.time() + self.config.sweep_interval
                    self.sweep()
            except Exception:
                logger.exception("a sweep of the hub failed")
            await asyncio.sleep(min(self.config.stream_sweep_interval, self.config.sweep_interval))
