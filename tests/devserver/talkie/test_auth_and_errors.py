"""Bearer auth (§2.2) and the error envelope (§3) on every kind of failure."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.helpers import AUTH, TEST_TOKEN, assert_error, run_body

PROTECTED = [
    ("GET", "/api/talkie/status"),
    ("POST", "/api/talkie/run"),
    ("POST", "/api/talkie/runs/r1/cancel"),
    ("GET", "/api/talkie/threads"),
    ("GET", "/api/talkie/threads/t1"),
    ("DELETE", "/api/talkie/threads/t1"),
    ("GET", "/api/talkie/actions/a1"),
    ("POST", "/api/talkie/actions/a1/decision"),
    ("GET", "/api/files/Nabidka-N-2026-014.pdf"),
    ("GET", "/api/talkie/no-such-endpoint"),
]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TEST_TOKEN}"}],
    ids=["missing", "wrong", "not-bearer"],
)
def test_protected_endpoints_need_the_token(
    http: httpx.Client, fast_url: str, headers: dict[str, str]
) -> None:
    for method, path in PROTECTED:
        response = http.request(method, f"{fast_url}{path}", headers=headers)
        assert_error(response, 401, "unauthorized")
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_without_dev_token_no_auth_is_needed(
    http: httpx.Client, devserver: Callable[..., str]
) -> None:
    url = devserver()
    assert http.get(f"{url}/api/talkie/status").status_code == 200
    assert http.get(f"{url}/api/files/Nabidka-N-2026-014.pdf").status_code == 200


def test_unknown_route_is_404(http: httpx.Client, fast_url: str) -> None:
    for path in ("/api/talkie/no-such-endpoint", "/api/talkie/threads/", "/api/other", "/nowhere"):
        error = assert_error(http.get(f"{fast_url}{path}", headers=AUTH), 404, "not_found")
        assert path in error["message"]


def test_wrong_method_is_405_invalid_request(http: httpx.Client, fast_url: str) -> None:
    response = http.get(f"{fast_url}/api/talkie/run", headers=AUTH)
    error = assert_error(response, 405, "invalid_request")
    assert "POST" in error["message"]
    assert response.headers["allow"] == "POST"
    response = http.put(f"{fast_url}/api/talkie/threads/t1", headers=AUTH)
    assert_error(response, 405, "invalid_request")
    assert "DELETE" in response.headers["allow"]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "empty"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"threadId": "t", "messages": []}', "runId"),
        (b'{"threadId": "t", "runId": "r", "messages": [{"role": "user"}]}', "messages.0"),
        (b'{"threadId": "t", "runId": "r", "messages": []}', "user message"),
        (
            b'{"threadId": "t", "runId": "r", "messages": '
            b'[{"id": "m", "role": "user", "content": "  "}]}',
            "no text",
        ),
    ],
    ids=["empty", "malformed", "array", "no-run-id", "bad-message", "no-messages", "blank"],
)
def test_bad_run_requests_are_400(
    http: httpx.Client, fast_url: str, content: bytes, fragment: str
) -> None:
    response = http.post(
        f"{fast_url}/api/talkie/run",
        content=content,
        headers={**AUTH, "Content-Type": "application/json"},
    )
    error = assert_error(response, 400, "invalid_request")
    assert fragment in error["message"]


def test_too_long_message_is_413(http: httpx.Client, devserver: Callable[..., str]) -> None:
    url = devserver(max_message_chars=50)
    response = http.post(f"{url}/api/talkie/run", json=run_body("x" * 51))
    error = assert_error(response, 413, "too_large")
    assert "50" in error["message"]
    ok = http.post(f"{url}/api/talkie/run", json=run_body("y" * 50))
    assert ok.status_code == 200


def test_unexpected_exception_is_500_internal(
    http: httpx.Client, fast_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from talkie_tui.devserver.talkie.storage import Storage

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Storage, "list_threads", broken)
    response = http.get(f"{fast_url}/api/talkie/threads", headers=AUTH)
    error = assert_error(response, 500, "internal")
    assert "disk on fire" not in error["message"]
