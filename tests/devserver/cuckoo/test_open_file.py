"""Downloads from a file opened before the answer: whole even when deleted meanwhile, one byte
range honoured, HEAD without a body."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.testclient import TestClient

from talkie_tui.devserver.cuckoo.open_file import OpenFileResponse, open_or_none

# Over two chunks, so that the body is read off the event loop in parts.
DATA = bytes(range(256)) * 600


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    path = tmp_path / "med_x"

    async def download(request: Request) -> Response:
        path.write_bytes(DATA)
        file = open_or_none(path)
        if file is None:
            return Response(status_code=404)
        if request.query_params.get("unlink"):
            path.unlink()  # as the sweeper does, between the open and the body
        return OpenFileResponse(file, media_type="text/plain", filename="naïve name.txt")

    app = Starlette(routes=[Route("/f", download, methods=["GET"])])
    with TestClient(app) as test_client:
        yield test_client


def test_a_file_deleted_after_it_was_opened_is_sent_whole(client: TestClient) -> None:
    answer = client.get("/f", params={"unlink": "1"})
    assert answer.status_code == 200
    assert answer.content == DATA
    assert answer.headers["content-length"] == str(len(DATA))
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.headers["content-disposition"] == "inline; filename*=utf-8''na%C3%AFve%20name.txt"
    assert answer.headers["accept-ranges"] == "bytes"


def test_a_file_that_is_not_there_is_none(tmp_path: Path) -> None:
    assert open_or_none(tmp_path / "gone") is None


@pytest.mark.parametrize(
    ("header", "status", "start", "end"),
    [
        ("bytes=10-19", 206, 10, 20),
        ("bytes=100000-", 206, 100000, len(DATA)),
        ("bytes=-5", 206, len(DATA) - 5, len(DATA)),
        ("bytes=5-999999999", 206, 5, len(DATA)),
        ("bytes=0-1,5-6", 200, 0, len(DATA)),  # several ranges: the whole file
        ("items=0-1", 200, 0, len(DATA)),
        ("bytes=20-10", 200, 0, len(DATA)),  # not a valid range: ignored
    ],
)
def test_one_range_is_honoured(
    client: TestClient, header: str, status: int, start: int, end: int
) -> None:
    answer = client.get("/f", headers={"Range": header})
    assert answer.status_code == status
    assert answer.content == DATA[start:end]
    assert answer.headers["content-length"] == str(end - start)
    if status == 206:
        assert answer.headers["content-range"] == f"bytes {start}-{end - 1}/{len(DATA)}"


@pytest.mark.parametrize("header", ["bytes=999999-", "bytes=-0"])
def test_a_range_past_the_end_is_416(client: TestClient, header: str) -> None:
    answer = client.get("/f", headers={"Range": header})
    assert answer.status_code == 416
    assert answer.headers["content-range"] == f"bytes */{len(DATA)}"


def test_head_sends_the_headers_only(client: TestClient) -> None:
    answer = client.head("/f")
    assert answer.status_code == 200
    assert answer.content == b""
    assert answer.headers["content-length"] == str(len(DATA))
