"""Running the gateway: in a thread (nothing left behind, a restart keeps sessions and seq),
and as `talkie serve --protocol minara` (uvicorn's WebSocket without deprecation warnings)."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from talkie_tui.cli import build_parser
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread
from talkie_tui.devserver.minara.storage import Storage
from tests.devserver.minara.wire import (
    Socket,
    run_turn,
    session_detail,
    start_turn,
    text_of,
    ws_url,
)
from tests.devserver.processes import server_process
from tests.helpers import TEST_TOKEN


def test_serve_in_thread_leaves_nothing_behind(tmp_path: Path) -> None:
    threads_before = set(threading.enumerate())
    config = GatewayConfig(db_path=tmp_path / "db.sqlite3", test_mode=True)
    for _ in range(2):
        with serve_in_thread(config) as url:
            assert url.startswith("http://127.0.0.1:")
            with httpx.Client(timeout=10) as http:
                run_turn(http, url, "minara-test:echo hi")
                start_turn(http, url, "minara-test:endless")  # still running at the stop
            with Socket(url, token=None) as socket:
                socket.send({"type": "ping"})
                assert socket.recv() == {"type": "pong"}
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/healthz")
    assert set(threading.enumerate()) == threads_before


def test_a_restart_keeps_sessions_rows_and_the_seq(tmp_path: Path) -> None:
    config = GatewayConfig(auth_token=TEST_TOKEN, db_path=tmp_path / "db.sqlite3", test_mode=True)
    with httpx.Client(timeout=10) as http:
        with serve_in_thread(config) as url:
            session_id, first = run_turn(http, url, "minara-test:echo before")
            stopped = start_turn(http, url, "minara-test:endless")["session_id"]
        with serve_in_thread(config) as url:
            detail = session_detail(http, url, session_id)
            assert detail["last_seq"] == first[-1][0] == 5
            assert [row["role"] for row in detail["messages"]] == ["user", "assistant"]
            _, second = run_turn(http, url, "minara-test:echo after", session_id=session_id)
            assert [seq for seq, _ in second] == [6, 7, 8, 9, 10]
            # The turn the stop cut short was stored with what it wrote, ended in the gateway's
            # words (not as the person's interrupt).
            cut = session_detail(http, url, stopped)
            assert cut["is_streaming"] is False
            error = cut["messages"][-1]["metadata"]["error"]
            assert error["code"] == "interrupted" and error["retryable"] is True
            assert "The answer is incomplete" in error["message"]
            assert cut["messages"][-1]["content"].startswith("tick 1")


def test_a_turn_left_running_by_a_crash_gets_an_error_row(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    storage = Storage(db)
    storage.create_session("chat_crash", "Crash", "chat", "api", "2026-01-01T00:00:00.000Z")
    storage.set_active_turn("chat_crash", "turn_lost", 7)
    storage.close()
    with serve_in_thread(GatewayConfig(db_path=db)) as url, httpx.Client() as http:
        detail = session_detail(http, url, "chat_crash")
    assert detail["is_streaming"] is False and detail["last_seq"] == 7
    row = detail["messages"][-1]
    assert row["id"] == "turn_lost" and row["metadata"]["error"]["retryable"] is True


def test_the_database_is_wal_with_full_text_search(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "db.sqlite3"
    with serve_in_thread(GatewayConfig(db_path=db, test_mode=True)) as url, httpx.Client() as http:
        run_turn(http, url, "minara-test:echo hi")
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        sql = check.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()
    assert "fts5" in sql[0].lower()
    assert (tmp_path / "db-files").is_dir()


def test_serve_parses_minara_with_an_auth_token() -> None:
    args = build_parser().parse_args(["serve", "--protocol", "minara", "--auth-token", "T"])
    assert (args.protocol, args.dev_token) == ("minara", "T")
    args = build_parser().parse_args(["serve", "--protocol", "talkie", "--dev-token", "D"])
    assert (args.protocol, args.dev_token) == ("talkie", "D")


def test_talkie_serve_protocol_minara_serves_a_gateway(tmp_path: Path) -> None:
    args = ["-W", "error", "-m", "talkie_tui.cli", "serve", "--protocol", "minara"]
    args += ["--auth-token", TEST_TOKEN, "--test-mode", "--db", str(tmp_path / "db.sqlite3")]
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    with server_process(args, env=env) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        with httpx.Client(timeout=10) as http:
            assert http.get(f"{url}/healthz").json() == {"ok": True}
            assert http.get(f"{url}/v1/sessions").status_code == 401
            session_id, events = run_turn(http, url, "minara-test:echo served")
            assert text_of(events) == "served"
        with connect(ws_url(url), open_timeout=5) as socket:
            frame = {"type": "subscribe", "channel": "chat", "key": session_id, "fromSeq": 4}
            socket.send(json.dumps(frame))
            assert json.loads(socket.recv(timeout=5))["lastSeq"] == 5
            assert json.loads(socket.recv(timeout=5))["event"]["type"] == "done"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
        assert process.stdout is not None
        process.stdout.close()


def test_talkie_serve_minara_takes_the_token_from_the_environment(tmp_path: Path) -> None:
    args = ["-m", "talkie_tui.cli", "serve", "--protocol", "minara"]
    args += ["--db", str(tmp_path / "db.sqlite3")]
    env = {**os.environ, "GATEWAY_AUTH_TOKEN": "from-env"}
    with server_process(args, env=env) as (process, url):
        assert httpx.get(f"{url}/v1/sessions").status_code == 401
        ok = httpx.get(f"{url}/v1/sessions", headers={"Authorization": "Bearer from-env"})
        assert ok.status_code == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
        assert process.stdout is not None
        process.stdout.close()


def test_talkie_only_options_are_refused_for_minara(capsys: pytest.CaptureFixture[str]) -> None:
    from talkie_tui.cli import main

    assert main(["serve", "--protocol", "minara", "--fake-voice"]) == 2
    assert "--fake-voice" in capsys.readouterr().err


def test_the_uvicorn_websocket_implementation_is_the_sans_io_one() -> None:
    import uvicorn

    config = uvicorn.Config(lambda *args: None, ws="auto")
    config.load()
    assert config.ws_protocol_class is not None
    assert config.ws_protocol_class.__name__ == "WebSocketsSansIOProtocol"
