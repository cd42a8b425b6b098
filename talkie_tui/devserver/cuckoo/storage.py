"""The hub's SQLite database: every table on one WAL connection (see `tables.py`)."""

from __future__ import annotations

from pathlib import Path

from talkie_tui.devserver.cuckoo.agent_store import AgentStore
from talkie_tui.devserver.cuckoo.chat_store import ChatStore
from talkie_tui.devserver.cuckoo.hiding_store import HidingStore
from talkie_tui.devserver.cuckoo.media_store import MediaStore
from talkie_tui.devserver.cuckoo.outbox_store import OutboxStore
from talkie_tui.devserver.cuckoo.people_store import PeopleStore
from talkie_tui.devserver.cuckoo.reach_store import REACH_SCHEMA, ReachStore
from talkie_tui.devserver.cuckoo.schedules_store import SchedulesStore
from talkie_tui.devserver.cuckoo.tables import SCHEMA


class Storage(
    PeopleStore,
    AgentStore,
    ChatStore,
    OutboxStore,
    MediaStore,
    ReachStore,
    HidingStore,
    SchedulesStore,
):
    """People, agents, conversations, messages, the outbox, media, the catalogue, contacts
    and reports, what people hid, and the schedules of one hub."""

    SCHEMA = SCHEMA + REACH_SCHEMA

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        # WAL with NORMAL: a commit is written to the log without an fsync of its own (the log
        # is synced at checkpoints). A hub that stops or crashes loses nothing committed; only
        # a power cut may take the last commits. FULL syncs every commit, several per message.
        self._db.execute("PRAGMA synchronous=NORMAL")
