"""The long-lived objects of a running server, created in its lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from . import demo_actions, testmode
from .actions import ActionService
from .config import ServerConfig
from .runs import RunManager
from .storage import Storage


@dataclass
class Services:
    """Configuration, storage, actions and runs of one server."""

    config: ServerConfig
    storage: Storage
    server_id: str
    actions: ActionService
    runs: RunManager

    @classmethod
    def open(cls, config: ServerConfig) -> Services:
        """Open the database and start the managers (call inside the server's event loop)."""
        storage = Storage(config.resolved_db_path())
        actions = ActionService(
            storage, config, {**testmode.ACTION_KINDS, **demo_actions.ACTION_KINDS}
        )
        runs = RunManager(storage, config, actions)
        runs.recover_unfinished()
        return cls(config, storage, storage.server_id(), actions, runs)

    async def close(self) -> None:
        """Stop the runs and close the database."""
        await self.runs.shutdown()
        self.storage.close()
