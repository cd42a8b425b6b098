"""Manifest (§1) and brand logo."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.helpers import TEST_TOKEN
from tests.stub_server import ENDPOINTS


def test_manifest_shape(http: httpx.Client, fast_url: str) -> None:
    response = http.get(f"{fast_url}/.well-known/talkie.json")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "max-age=3600"
    manifest = response.json()
    assert manifest["spec"] == "talkie/1"
    assert manifest["issuer"] == fast_url
    assert manifest["serverId"].startswith("dev-") and len(manifest["serverId"]) == 12
    assert manifest["name"] == "Talkie Demo CRM"
    assert manifest["description"]
    assert manifest["locale"] == "en"
    assert manifest["brand"] == {"logo": "/talkie/logo.png", "accent": "#0b7a75"}
    assert manifest["auth"] == {"token": {"hint": manifest["auth"]["token"]["hint"]}}
    assert manifest["endpoints"] == ENDPOINTS  # the §1 example without the voice ones
    assert "voice" not in manifest["capabilities"]
    assert manifest["capabilities"]["actions"] == {"voiceConfirm": True}
    assert manifest["capabilities"]["cards"]["blocks"] == [
        "heading", "text", "fields", "list", "link", "file", "badge",
    ]  # fmt: skip
    assert manifest["limits"] == {"maxMessageChars": 4000}
    assert manifest["testMode"] is True
    assert len(response.content) <= 64 * 1024


def test_issuer_follows_host_header(http: httpx.Client, fast_url: str) -> None:
    response = http.get(f"{fast_url}/.well-known/talkie.json", headers={"Host": "localhost:1234"})
    assert response.json()["issuer"] == "http://localhost:1234"


def test_options_are_published(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(
        oauth_issuer="https://auth.example.com",
        max_message_chars=123,
        manifest_max_age=60,
    )
    response = http.get(f"{url}/.well-known/talkie.json")
    manifest = response.json()
    assert response.headers["cache-control"] == "max-age=60"
    assert manifest["auth"] == {
        "oauth": {"issuer": "https://auth.example.com", "scopes": ["talkie", "offline_access"]}
    }
    assert manifest["limits"]["maxMessageChars"] == 123
    assert manifest["testMode"] is False


def test_server_id_is_stable_per_database(
    http: httpx.Client, devserver: Callable[..., str], tmp_path: Path
) -> None:
    db = tmp_path / "stable.sqlite3"
    first = http.get(f"{devserver(db_path=db)}/.well-known/talkie.json").json()["serverId"]
    again = http.get(f"{devserver(db_path=db)}/.well-known/talkie.json").json()["serverId"]
    other = http.get(f"{devserver()}/.well-known/talkie.json").json()["serverId"]
    assert first == again
    assert other != first


def test_manifest_and_logo_are_public(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(dev_token=TEST_TOKEN)
    assert http.get(f"{url}/.well-known/talkie.json").status_code == 200
    assert http.get(f"{url}/talkie/logo.png").status_code == 200


def test_logo_is_a_valid_png(http: httpx.Client, fast_url: str) -> None:
    response = http.get(f"{fast_url}/talkie/logo.png")
    assert response.headers["content-type"] == "image/png"
    data = response.content
    assert len(data) <= 256 * 1024
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, chunks = 8, {}
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + body)
        chunks[kind] = body
        offset += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (width, height, depth, colour) == (64, 64, 8, 6)
    assert len(zlib.decompress(chunks[b"IDAT"])) == height * (1 + width * 4)
    assert b"IEND" in chunks
