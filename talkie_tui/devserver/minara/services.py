"""The long-lived objects of a running gateway, created in its lifespan."""

from __future__ import annotations

from dataclasses import dataclass, field

from talkie_tui.devserver.minara.channels import Channels
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.credentials import Credentials
from talkie_tui.devserver.minara.files import FileStore
from talkie_tui.devserver.minara.questions import QuestionBoard
from talkie_tui.devserver.minara.socket_registry import SocketRegistry
from talkie_tui.devserver.minara.storage import Storage
from talkie_tui.devserver.minara.turns import TurnManager
from talkie_tui.devserver.minara.voice import Transcriber


@dataclass
class Services:
    """Configuration, storage, channels, turns, questions, files and sockets of one gateway."""

    config: GatewayConfig
    storage: Storage
    channels: Channels
    questions: QuestionBoard
    turns: TurnManager
    files: FileStore
    credentials: Credentials = field(repr=False)
    sockets: SocketRegistry
    transcriber: Transcriber

    @classmethod
    def open(cls, config: GatewayConfig) -> Services:
        """Open the database and start the managers (call inside the server's event loop)."""
        storage = Storage(config.resolved_db_path())
        credentials = Credentials()
        questions = QuestionBoard(credentials)

        def last_seq_of(session_id: str) -> int | None:
            row = storage.get_session(session_id)
            return int(row["last_seq"]) if row is not None else None

        channels = Channels(last_seq_of, config.turn_buffer_seconds)
        turns = TurnManager(storage, channels, questions, config)
        turns.recover_unfinished()
        files = FileStore(storage, config.resolved_data_dir(), config)
        return cls(
            config=config,
            storage=storage,
            channels=channels,
            questions=questions,
            turns=turns,
            files=files,
            credentials=credentials,
            sockets=SocketRegistry(),
            transcriber=Transcriber(),
        )

    async def close(self) -> None:
        """Stop the turns (their rows are stored) and close the database."""
        await self.turns.shutdown()
        self.storage.close()
