"""serve_in_thread and run_forever: binding, clean shutdown, recovery after a restart."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import httpx
import pytest

from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread
from talkie_tui.devserver.talkie.storage import Storage
from talkie_tui.devserver.talkie.testmode import SLOW_TEXT
from tests.devserver.processes import server_process
from tests.helpers import AUTH, TEST_TOKEN, iter_sse, run, run_body, text_of

ROOT = Path(__file__).resolve().parents[3]


def test_serve_in_thread_leaves_nothing_behind(tmp_path: Path) -> None:
    threads_before = set(threading.enumerate())
    config = ServerConfig(db_path=tmp_path / "db.sqlite3")
    for _ in range(3):
        with serve_in_thread(config) as url:
            assert url.startswith("http://127.0.0.1:") and not url.endswith("/")
            assert httpx.get(f"{url}/.well-known/talkie.json").status_code == 200
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/.well-known/talkie.json")
    assert set(threading.enumerate()) == threads_before


def test_fixed_port(tmp_path: Path) -> None:
    with serve_in_thread(ServerConfig(db_path=tmp_path / "a.sqlite3")) as url:
        port = int(url.rsplit(":", 1)[1])
    config = ServerConfig(port=port, db_path=tmp_path / "b.sqlite3")
    with serve_in_thread(config) as again:
        assert again == f"http://127.0.0.1:{port}"


def test_port_in_use_fails_fast(tmp_path: Path) -> None:
    with serve_in_thread(ServerConfig(db_path=tmp_path / "a.sqlite3")) as url:
        port = int(url.rsplit(":", 1)[1])
        with (
            pytest.raises(OSError),
            serve_in_thread(ServerConfig(port=port, db_path=tmp_path / "b.sqlite3")),
        ):
            pass


def test_shutdown_with_an_open_stream_is_prompt_and_keeps_the_partial_answer(
    tmp_path: Path,
) -> None:
    config = ServerConfig(
        test_mode=True, dev_token=TEST_TOKEN, db_path=tmp_path / "db.sqlite3", slow_seconds=30
    )
    body = run_body("talkie-test:slow")
    with httpx.Client(timeout=10) as http:
        with (
            serve_in_thread(config) as url,
            http.stream("POST", f"{url}/api/talkie/run", json=body, headers=AUTH) as response,
        ):
            frames = iter_sse(response.iter_text())
            for _ in range(3):
                next(frames)
        # Prompt: the stop did not wait for the 30-second answer, which it cut (a stop that
        # waited would store it whole and finished); no clock needed.
        with serve_in_thread(config) as url:
            thread = http.get(f"{url}/api/talkie/threads/{body['threadId']}", headers=AUTH)
            messages = thread.json()["messages"]
            assert [m["role"] for m in messages] == ["user", "assistant"]
            assert messages[1]["content"] and messages[1]["content"] != SLOW_TEXT
            # Cut by the server, not stopped by the person: marked so (a retry redoes it).
            assert messages[1]["incomplete"] is True
            assert messages[1]["events"][-1]["type"] == "RUN_ERROR"


def test_a_run_left_running_is_closed_on_restart(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    storage = Storage(db)
    storage.create_thread("u1", "t1", "crashed", "chat", "2026-01-01T00:00:00.000Z")
    storage.add_message("t1", "m1", "user", "talkie-test:echo again", "2026-01-01T00:00:00.000Z")
    storage.create_run("r1", "t1", "u1", "m1", "2026-01-01T00:00:00.000Z")
    storage.close()
    config = ServerConfig(test_mode=True, dev_token=TEST_TOKEN, db_path=db)
    with serve_in_thread(config) as url, httpx.Client(timeout=10) as http:
        body = run_body("talkie-test:echo again", thread_id="t1", message_id="m1")
        # The interrupted answer is retried instead of replayed.
        assert text_of(run(http, url, body)) == "again"
        messages = http.get(f"{url}/api/talkie/threads/t1", headers=AUTH).json()["messages"]
        assert [m["content"] for m in messages] == ["talkie-test:echo again", "again"]


def test_run_forever_prints_its_url_and_stops_on_sigint(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from talkie_tui.devserver.talkie.config import ServerConfig\n"
        "from talkie_tui.devserver.talkie.runner import run_forever\n"
        "config = ServerConfig(db_path=Path(sys.argv[1]))\n"
        "run_forever(config, lambda url: print(url, flush=True))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["-c", script, str(tmp_path / "db.sqlite3")]
    with server_process(args, env) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        manifest = httpx.get(f"{url}/.well-known/talkie.json").json()
        assert manifest["issuer"] == url
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
