"""The hub's SQLite database: every table on one WAL connection (see `tables.py`)."""

from __future__ import annotations

from .agent_store import AgentStore
from .chat_store import ChatStore
from .media_store import MediaStore
from .outbox_store import OutboxStore
from .people_store import PeopleStore
from .tables import SCHEMA


class Storage(PeopleStore, AgentStore, ChatStore, OutboxStore, MediaStore):
    """People, agents, conversations, messages, the outbox and media of one hub."""

    SCHEMA = SCHEMA
