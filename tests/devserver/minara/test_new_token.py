"""A gateway restarted with a new token: the open sockets of the old one are closed (with a
close code, never dropped), and the old token opens no socket again (4401)."""

from __future__ import annotations

from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread
from tests.devserver.cuckoo.wire import next_frame


def _stream(url: str, token: str) -> str:
    return url.replace("http://", "ws://") + f"/v1/stream?token={token}"


async def test_a_restart_with_a_new_token_shuts_the_old_one_out(tmp_path: Path) -> None:
    db = tmp_path / "gateway.sqlite3"
    with serve_in_thread(GatewayConfig(auth_token="old-token", db_path=db)) as url:
        port = int(url.rsplit(":", 1)[1])
        socket = await connect(_stream(url, "old-token"))
        await socket.send('{"type": "ping"}')
        assert (await next_frame(socket))["type"] == "pong"
    # The gateway stopped: its sockets were closed with a code.
    with pytest.raises(ConnectionClosed) as closed:
        await socket.recv()
    assert closed.value.rcvd is not None
    config = GatewayConfig(auth_token="new-token", db_path=db, port=port)
    with serve_in_thread(config) as url:
        async with connect(_stream(url, "old-token")) as refused:
            with pytest.raises(ConnectionClosed) as closed:
                await refused.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
        async with connect(_stream(url, "new-token")) as fresh:
            await fresh.send('{"type": "ping"}')
            assert (await next_frame(fresh))["type"] == "pong"
