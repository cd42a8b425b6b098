"""The reference Minara gateway's own request path: JSON requests and stream frames per second.

The gateway runs in this process (its own thread, test mode, a temporary database) and a
keep-alive client on 127.0.0.1 sends, for a fixed time each:

1. `POST /v1/sessions {title}` then `GET /v1/sessions/:id` (a JSON body read with its cap and
   decoded, a row written and read back): requests per second;
2. `{"type": "ping"}` frames on `/v1/stream`, each waiting for its pong: frames per second.

The figures are of one run on a machine that may be busy with other work: compare trees in one
session, alternating. Prints one JSON line per phase.

    .venv/bin/python benchmarks/minara_gateway.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread

TOKEN = "bench-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def requests_per_second(url: str, seconds: float) -> dict[str, float]:
    """Create and read back sessions for `seconds`."""
    done = 0
    with httpx.Client(timeout=10) as http:
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            made = http.post(f"{url}/v1/sessions", headers=AUTH, json={"title": "bench"})
            session_id = made.json()["data"]["id"]
            assert http.get(f"{url}/v1/sessions/{session_id}", headers=AUTH).status_code == 200
            done += 2
        elapsed = time.perf_counter() - started
    return {"requests": done, "requests_per_s": round(done / elapsed, 1)}


async def frames_per_second(url: str, seconds: float) -> dict[str, float]:
    """Ping the stream and wait for each pong, for `seconds`."""
    done = 0
    async with connect(url.replace("http://", "ws://") + f"/v1/stream?token={TOKEN}") as socket:
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            await socket.send('{"type": "ping"}')
            while json.loads(await socket.recv())["type"] != "pong":
                pass
            done += 1
        elapsed = time.perf_counter() - started
    return {"round_trips": done, "frames_per_s": round(done / elapsed, 1)}


def main() -> None:
    """Run both phases and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each phase")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        config = GatewayConfig(
            test_mode=True, auth_token=TOKEN, db_path=Path(folder) / "gateway.sqlite3"
        )
        with serve_in_thread(config) as url:
            rest = requests_per_second(url, options.seconds)
            print(json.dumps({"benchmark": "minara_gateway", "phase": "rest", **rest}))
            frames = asyncio.run(frames_per_second(url, options.seconds))
            print(json.dumps({"benchmark": "minara_gateway", "phase": "stream", **frames}))


if __name__ == "__main__":
    main()
