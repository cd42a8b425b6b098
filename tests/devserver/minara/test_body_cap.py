"""Every JSON route of the gateway caps its body at 1 MiB before reading it: a larger declared
length is answered 413 at once, a chunked body is cut off as it passes the cap."""

from __future__ import annotations

import json

import pytest

from tests.devserver.hostile.raw_http import chunked_without_end, declared_but_not_sent
from tests.helpers import TEST_TOKEN

AUTH = {"Authorization": f"Bearer {TEST_TOKEN}"}
JSON_ROUTES = [
    ("POST", "/v1/sessions"),
    ("POST", "/v1/chat/stream"),
    ("POST", "/v1/chat/interrupt"),
    ("POST", "/v1/chat/interject"),
    ("POST", "/v1/interactions/q_1/answer"),
    ("PUT", "/v1/credentials/key"),
]


def _code(body: bytes) -> str:
    code: str = json.loads(body)["error"]["code"]
    return code


@pytest.mark.parametrize(("method", "path"), JSON_ROUTES)
def test_a_declared_256_mib_body_is_refused_at_once(fast_url: str, method: str, path: str) -> None:
    status, answer = declared_but_not_sent(fast_url, method, path, 256 * 1024 * 1024, AUTH)
    assert status == 413 and _code(answer) == "body_too_large"


@pytest.mark.parametrize(("method", "path"), JSON_ROUTES)
def test_a_chunked_body_is_cut_off_past_the_cap(fast_url: str, method: str, path: str) -> None:
    # The last chunk never comes: a server that reads the whole body never answers.
    status, answer = chunked_without_end(fast_url, method, path, 2 * 1024 * 1024, AUTH)
    assert status == 413 and _code(answer) == "body_too_large"
