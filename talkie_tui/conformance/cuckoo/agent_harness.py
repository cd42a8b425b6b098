"""What `talkie conformance agent` runs around the agent under test: a reference hub of its
own (`talkie serve --protocol cuckoo --dev` in a temporary folder), a relay between the agent
and that hub which sees every event and ack (and can deliver an event again or drop the socket,
as a network would), and the agent's own process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from starlette.websockets import WebSocket
from websockets.asyncio.client import ClientConnection

from talkie_tui.conformance.relay import Json, Relay

__all__ = ["AgentProcess", "AgentRelay", "ReferenceHub"]

START_WAIT = 30.0
STOP_WAIT = 5.0


class ReferenceHub:
    """A development-mode reference hub in a child process; `url` once it listens."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.url = ""
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> str:
        """Start the hub and return its URL (the one line `talkie serve` prints)."""
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "talkie_tui.cli",
            "serve",
            "--protocol",
            "cuckoo",
            "--dev",
            "--port",
            "0",
            "--db",
            str(self.folder / "hub.sqlite3"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            stdin=asyncio.subprocess.DEVNULL,
        )
        assert self._process.stdout is not None
        async with asyncio.timeout(START_WAIT):
            line = await self._process.stdout.readline()
        self.url = line.decode().strip()
        if not self.url.startswith("http"):
            raise RuntimeError("the reference hub did not start")
        return self.url

    async def stop(self) -> None:
        """Stop the hub."""
        await _end(self._process)


async def _end(process: asyncio.subprocess.Process | None) -> None:
    """Ask a child process to end (SIGTERM), kill it when it does not."""
    if process is None or process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    try:
        async with asyncio.timeout(STOP_WAIT):
            await process.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


@dataclass
class AgentProcess:
    """The agent backend under test: COMMAND with `CUCKOO_HUB` and `CUCKOO_SECRET`."""

    command: list[str]
    log: Path
    process: asyncio.subprocess.Process | None = None
    _log_file: IO[bytes] | None = None

    async def start(self, environment: dict[str, str]) -> None:
        """Start the command; its output goes to the log file."""
        self._log_file = self.log.open("wb")
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            env={**os.environ, **environment},
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
        )

    @property
    def exited(self) -> str | None:
        """Why the agent is gone (its exit code and last line of output), or None."""
        if self.process is None or self.process.returncode is None:
            return None
        lines = self.log.read_text(errors="replace").strip().splitlines()
        last = f": {lines[-1][:160]}" if lines else ""
        return f"the agent exited with code {self.process.returncode}{last}"

    async def stop(self) -> None:
        """End the agent."""
        await _end(self.process)
        if self._log_file is not None:
            self._log_file.close()


class AgentRelay(Relay):
    """The relay on the agent's side: it records pushes and acks per event id."""

    socket_paths = ("/v1/agent/socket",)

    def __init__(self, upstream: str) -> None:
        super().__init__(upstream)
        self.pushed: dict[str, Json] = {}
        self.pushes: Counter[str] = Counter()
        self.acks: Counter[str] = Counter()
        self.first_ack: dict[str, float] = {}  # event id -> when the agent first acked it
        self.completed: dict[str, float] = {}  # message id -> when the agent completed it
        self.connections = 0
        self.current: WebSocket | None = None

    async def socket(self, websocket: WebSocket) -> None:
        """Count the agent's connections and remember the live one."""
        self.connections += 1
        self.current = websocket
        await super().socket(websocket)

    async def server_frames(self, frame: Json, websocket: WebSocket) -> list[Json]:
        """Record an event pushed to the agent."""
        event_id = frame.get("id")
        if isinstance(event_id, str) and "type" in frame:
            self.pushed.setdefault(event_id, frame)
            self.pushes[event_id] += 1
        self._note_completed(frame)  # the reply to a `send` or `stream.end` op
        return [frame]

    def answer_json(self, path: str, status: int, data: Any) -> tuple[int, Any]:
        """Record a message the agent completed over HTTP (a send, a finished stream)."""
        self._note_completed(data)
        return status, data

    def _note_completed(self, data: Any) -> None:
        message = data.get("message") if isinstance(data, dict) else None
        if isinstance(message, dict) and message.get("status") == "complete":
            self.completed.setdefault(str(message.get("id")), time.monotonic())

    async def client_frame(self, frame: Json, upstream: ClientConnection) -> Json | None:
        """Record an ack from the agent."""
        if isinstance(frame.get("ack"), str):
            self.acks[frame["ack"]] += 1
            self.first_ack.setdefault(frame["ack"], time.monotonic())
        return frame

    def events(self, kind: str) -> list[Json]:
        """The events of one type pushed so far, in order."""
        return [event for event in self.pushed.values() if event.get("type") == kind]

    async def redeliver(self, event_id: str) -> None:
        """Send an event the agent already had once more (as after a lost ack)."""
        if self.current is None:
            raise RuntimeError("the agent has no socket")
        await self.current.send_text(json.dumps(self.pushed[event_id]))
        self.pushes[event_id] += 1

    async def drop(self) -> None:
        """Close the agent's socket as a restarting hub would (1012), so it must reconnect."""
        if self.current is not None:
            with contextlib.suppress(Exception):
                await self.current.close(1012)
