"""The hub's housekeeping: often, streams left open and socket agents nobody can reach; every
`sweep_interval`, events past their last try, the retention window, media budgets, unsent
uploads and old delivery records."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from talkie_tui.devserver.common import clock

if TYPE_CHECKING:
    from talkie_tui.devserver.cuckoo.services import Hub

logger = logging.getLogger(__name__)


def sweep_often(hub: Hub) -> None:
    """Finish streams left open; a socket agent whose events wait too long is unreachable."""
    hub.chat.sweep_streams()
    now = clock.now()
    for binding in hub.storage.socket_bindings():
        agent_id = binding["agent_id"]
        if hub.links.connected(agent_id):
            continue
        oldest = hub.storage.oldest_pending(agent_id)
        if oldest is None:
            continue
        waited = (now - clock.parse_iso(oldest)).total_seconds()
        if waited >= hub.config.unreachable_after:
            hub.outbox.failed(agent_id, since=oldest)


def sweep(hub: Hub) -> None:
    """One round of the slow housekeeping."""
    config = hub.config
    now = clock.now()
    given_up = hub.storage.give_up(
        clock.iso(clock.later(-config.give_up_seconds, now)), clock.iso(now)
    )
    for event in given_up:
        if event["message_id"]:
            hub.chat.delivery_changed(event["message_id"])
    hub.storage.delete_messages_before(hub.conversations.window_start())
    stale = hub.storage.stale_media(clock.iso(clock.later(-config.unsent_upload_seconds, now)))
    _delete_media(hub, stale)
    for owner in hub.storage.media_owners():
        budget = (
            config.person_media_budget
            if owner["owner_kind"] == "user"
            else config.agent_media_budget
        )
        _enforce_budget(hub, owner["owner_id"], budget)
    hub.storage.delete_final_events(clock.iso(clock.later(-config.delivery_record_seconds, now)))
    _delete_orphans(hub)


def _delete_orphans(hub: Hub) -> None:
    """Remove files that have no live row (a crash between write and insert, an older hub).

    An upload writes its file and inserts its row with no await between, on this same loop,
    so a sweep never sees a file whose row is about to come.
    """
    stored = hub.media.stored_ids()
    live = hub.storage.live_media_among(stored)
    for media_id in stored:
        if media_id not in live:
            hub.media.remove(media_id)


def _enforce_budget(hub: Hub, owner_id: str, budget: int) -> None:
    used = hub.storage.used_bytes(owner_id)
    doomed = []
    for row in hub.storage.sent_media_oldest_first(owner_id):
        if used <= budget:
            break
        doomed.append(str(row["id"]))
        used -= int(row["byte_size"])
    _delete_media(hub, doomed)


def _delete_media(hub: Hub, media_ids: list[str]) -> None:
    if not media_ids:
        return
    hub.storage.delete_media(media_ids, clock.iso(clock.now()))
    for media_id in media_ids:
        hub.media.remove(media_id)


async def run(hub: Hub) -> None:
    """Sweep until cancelled (a failed round is logged, and the next one comes anyway)."""
    loop = asyncio.get_running_loop()
    next_full = loop.time()
    while True:
        try:
            sweep_often(hub)
            if loop.time() >= next_full:
                next_full = loop.time() + hub.config.sweep_interval
                sweep(hub)
        except Exception:
            logger.exception("a sweep of the hub failed")
        await asyncio.sleep(min(hub.config.stream_sweep_interval, hub.config.sweep_interval))
