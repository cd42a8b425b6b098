"""An upload the hub refuses leaves no bytes on disk, and the sweeper removes files that have no
live media row (left by a crash or an older hub)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import error_of, make_agent

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ({"waveform": "1,2,999"}, "invalid_waveform"),
        ({"waveform": "a,b"}, "invalid_waveform"),
        ({"duration_ms": "-5"}, "invalid_duration"),
        ({"duration_ms": "9999999"}, "invalid_duration"),
    ],
)
def test_a_refused_upload_leaves_no_file(
    cuckoo_hub: Callable[..., str], tmp_path: Path, query: dict[str, str], code: str
) -> None:
    folder = tmp_path / "media"
    url = cuckoo_hub(data_dir=folder)
    with httpx.Client(timeout=10) as http:
        agent = make_agent(http, url)
        params = {"name": "voice.ogg", **query}
        refused = http.post(
            f"{url}/v1/agent/media", headers=agent.headers, params=params, content=b"OggS" * 100
        )
        assert refused.status_code == 422 and error_of(refused)["code"] == code
    assert sorted(folder.iterdir()) == []


def test_the_sweeper_removes_files_without_a_row(
    cuckoo_hub: Callable[..., str], tmp_path: Path
) -> None:
    folder = tmp_path / "media"
    url = cuckoo_hub(data_dir=folder, sweep_interval=0.05)
    with httpx.Client(timeout=10) as http:
        agent = make_agent(http, url)
        kept = http.post(
            f"{url}/v1/agent/media", headers=agent.headers, params={"name": "a.png"}, content=PNG
        ).json()["media"]["id"]
        orphan = new_id("med")
        (folder / orphan).write_bytes(b"left behind")
        (folder / f"{orphan}.thumb").write_bytes(b"left behind")
        deadline = time.monotonic() + 10
        while (folder / orphan).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(path.name for path in folder.iterdir()) == [kept]
        download = http.get(f"{url}/v1/agent/media/{kept}", headers=agent.headers)
        assert download.status_code == 200
