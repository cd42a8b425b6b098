"""Fixtures of the protocol tests: stub servers, the replay server, clients."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from starlette.types import ASGIApp

from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from tests.helpers import TEST_TOKEN
from tests.protocol.replay import replay_app
from tests.stub_server import StubServer

Serve = Callable[..., StubServer]
Connect = Callable[..., Awaitable[TalkieClient]]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Factory: `serve(app, host="127.0.0.1", **options) -> StubServer` (options of
    StubServer), stopped after the test."""
    servers: list[StubServer] = []

    def start(app: ASGIApp, host: str = "127.0.0.1", **options: Any) -> StubServer:
        server = StubServer(app, host, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.ask_to_stop()
    for server in servers:
        server.join()


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    """Factory: `await connect(address, token=TEST_TOKEN, **options) -> TalkieClient`.

    `token` becomes a StaticToken unless `tokens=` gives another token source.
    """
    clients: list[TalkieClient] = []

    async def open_client(address: str, token: str | None = TEST_TOKEN, **options: Any) -> Any:
        options.setdefault("retry_delay", 0.01)
        tokens = options.pop("tokens", StaticToken(token) if token else None)
        client = await TalkieClient.connect(address, tokens=tokens, **options)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await client.aclose()


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 (certfile, keyfile), made with openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command (apt install openssl)")
    folder = tmp_path_factory.mktemp("tls")
    certfile, keyfile = str(folder / "cert.pem"), str(folder / "key.pem")
    command = [
        *("openssl", "req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
        *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
        *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyfile, "-out", certfile),
    ]
    subprocess.run(command, check=True, capture_output=True)
    return certfile, keyfile


@pytest.fixture(scope="session")
def replay_server() -> Iterator[StubServer]:
    """One replay server for the session (it keeps no state between requests)."""
    server = StubServer(replay_app()).start()
    yield server
    server.stop()


@pytest.fixture
async def replay(replay_server: StubServer, connect: Connect) -> TalkieClient:
    """A client of the replay server."""
    return await connect(replay_server.origin)
