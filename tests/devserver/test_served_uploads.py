"""Uploads are served as downloads, never rendered on the server's origin: the gateway's files
and the hub's media carry `Content-Disposition: attachment`, `nosniff` and a sandbox policy,
and the gateway decides the type from the bytes (an HTML or SVG upload is plain text)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.devserver.cuckoo.wire import make_agent
from tests.helpers import AUTH

HTML = b"<html><script>alert(document.cookie)</script></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def assert_served_as_a_download(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert response.headers["content-disposition"].startswith("attachment;")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == "sandbox"


@pytest.mark.parametrize(
    ("name", "data", "declared", "served"),
    [
        ("page.html", HTML, "text/html", "text/plain"),
        ("logo.svg", SVG, "image/svg+xml", "text/plain"),
        ("chart.html", PNG, "text/html", "image/png"),
        ("notes.txt", b"plain words", "text/plain", "text/plain"),
    ],
)
def test_the_gateway_serves_uploads_as_downloads_of_their_bytes_type(
    gateway_url: str, name: str, data: bytes, declared: str, served: str
) -> None:
    with httpx.Client(timeout=10) as http:
        uploaded = http.post(
            f"{gateway_url}/v1/files", files={"file": (name, data, declared)}, headers=AUTH
        )
        assert uploaded.status_code == 200, uploaded.text
        assert uploaded.json()["mediaType"] == served
        download = http.get(f"{gateway_url}{uploaded.json()['url']}", headers=AUTH)
    assert_served_as_a_download(download)
    assert download.headers["content-type"].split(";")[0] == served
    assert download.content == data


@pytest.mark.parametrize("variant", [None, "thumb"])
def test_the_hub_serves_media_as_downloads(
    cuckoo_hub: Callable[..., str], variant: str | None
) -> None:
    import io

    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (8, 8)).save(picture, "PNG")
    data = HTML if variant is None else picture.getvalue()
    url = cuckoo_hub()
    with httpx.Client(timeout=10) as http:
        agent = make_agent(http, url)
        media = http.post(
            f"{url}/v1/agent/media", headers=agent.headers, params={"name": "x.html"}, content=data
        ).json()["media"]
        params = {"variant": variant} if variant else {}
        download = http.get(
            f"{url}/v1/agent/media/{media['id']}", headers=agent.headers, params=params
        )
    assert_served_as_a_download(download)
