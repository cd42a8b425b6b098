"""The long-lived objects of a running server, created in its lifespan."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from talkie_tui.devserver.talkie import demo_actions, testmode
from talkie_tui.devserver.talkie.actions import ActionService
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runs import RunManager
from talkie_tui.devserver.talkie.storage import Storage
from talkie_tui.devserver.talkie.voice import VoiceService

if TYPE_CHECKING:
    from talkie_tui.devserver.talkie.fake_voice.provider import FakeRealtimeProvider


@dataclass
class Services:
    """Configuration, storage, actions, runs and (with fake voice) voice of one server."""

    config: ServerConfig
    storage: Storage
    server_id: str
    actions: ActionService
    runs: RunManager
    voice: VoiceService | None = None
    provider: FakeRealtimeProvider | None = field(default=None, repr=False)

    @classmethod
    def open(cls, config: ServerConfig) -> Services:
        """Open the database and start the managers (call inside the server's event loop)."""
        storage = Storage(config.resolved_db_path())
        actions = ActionService(
            storage, config, {**testmode.ACTION_KINDS, **demo_actions.ACTION_KINDS}
        )
        runs = RunManager(storage, config, actions)
        runs.recover_unfinished()
        voice = VoiceService(storage, config, actions) if config.fake_voice else None
        return cls(config, storage, storage.server_id(), actions, runs, voice)

    async def start_voice(self) -> None:
        """Start the fake realtime provider when fake voice is on."""
        if self.voice is None:
            return
        # Imported only here: aiortc, PyAV and numpy are heavy and needed only for voice.
        from talkie_tui.devserver.talkie.fake_voice.provider import FakeRealtimeProvider
        from talkie_tui.devserver.talkie.fake_voice.script import load_script_file

        script_path = self.config.fake_voice_script
        script = load_script_file(script_path) if script_path is not None else None
        provider = FakeRealtimeProvider(
            self.voice.redeem, control=self.config.test_mode, script=script
        )
        await provider.start()
        self.provider = provider
        self.voice.provider = provider

    async def close(self) -> None:
        """Stop the provider and the runs, and close the database."""
        if self.provider is not None:
            if self.voice is not None:
                self.voice.provider = None
            await self.provider.stop()
            self.provider = None
        await self.runs.shutdown()
        self.storage.close()
