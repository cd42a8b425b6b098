"""Auth: a bearer on every /v1 route but the health checks; the socket refuses with 4401."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.devserver.minara.wire import Socket, start_turn
from tests.helpers import AUTH, TEST_TOKEN

ROUTES = [
    ("GET", "/v1/sessions"),
    ("POST", "/v1/sessions"),
    ("GET", "/v1/sessions/search?q=x"),
    ("GET", "/v1/sessions/chat_x"),
    ("DELETE", "/v1/sessions/chat_x"),
    ("POST", "/v1/chat/stream"),
    ("POST", "/v1/chat/interrupt"),
    ("POST", "/v1/chat/interject"),
    ("POST", "/v1/interactions/q_x/answer"),
    ("PUT", "/v1/credentials/x"),
    ("POST", "/v1/files"),
    ("GET", "/v1/files/chat/files/x"),
    ("POST", "/v1/voice/transcribe"),
    ("GET", "/v1/llm/available-models"),
    ("POST", "/v1/_test/drop_sockets"),
    ("GET", "/v1/_test/credentials/x"),
    ("GET", "/v1/no/such/route"),
]


def test_health_checks_need_no_token(http: httpx.Client, fast_url: str) -> None:
    assert http.get(f"{fast_url}/healthz").json() == {"ok": True}
    body = http.get(f"{fast_url}/v1/healthz").json()
    assert body["ok"] is True and isinstance(body["ts"], int)


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_v1_route_needs_the_bearer(
    http: httpx.Client, fast_url: str, method: str, path: str
) -> None:
    response = http.request(method, f"{fast_url}{path}")
    assert response.status_code == 401
    error = response.json()["error"]
    assert error["code"] == "unauthorized" and error["message"]
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "authorization", ["Bearer wrong", f"Bearer {TEST_TOKEN}x", TEST_TOKEN, f"Basic {TEST_TOKEN}"]
)
def test_a_wrong_or_malformed_bearer_is_refused(
    http: httpx.Client, fast_url: str, authorization: str
) -> None:
    for method, path in ROUTES[:6]:
        response = http.request(
            method, f"{fast_url}{path}", headers={"Authorization": authorization}
        )
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"


def test_the_right_bearer_opens_the_routes(http: httpx.Client, fast_url: str) -> None:
    assert http.get(f"{fast_url}/v1/sessions", headers=AUTH).status_code == 200


def test_an_anonymous_gateway_takes_requests_without_a_token(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(test_mode=True)
    answer = http.post(f"{url}/v1/chat/stream", json={"message": "minara-test:echo hi"})
    assert answer.status_code == 200
    with Socket(url, token=None) as socket:
        assert socket.subscribe(answer.json()["session_id"])["type"] == "subscribed"


def test_unknown_paths_and_methods_get_the_envelope(http: httpx.Client, fast_url: str) -> None:
    missing = http.get(f"{fast_url}/v1/nothing", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong = http.patch(f"{fast_url}/v1/llm/available-models", headers=AUTH)
    assert wrong.status_code == 405 and "error" in wrong.json()


def test_test_routes_exist_only_in_test_mode(
    http: httpx.Client, minara_gateway: Callable[..., str]
) -> None:
    url = minara_gateway(auth_token=TEST_TOKEN)
    assert http.post(f"{url}/v1/_test/drop_sockets", headers=AUTH).status_code == 404
    assert http.get(f"{url}/v1/_test/credentials/x", headers=AUTH).status_code == 404


@pytest.mark.parametrize("token", [None, "wrong"])
def test_the_socket_refuses_a_missing_or_bad_token_with_4401(
    fast_url: str, token: str | None
) -> None:
    with Socket(fast_url, token=token) as socket, pytest.raises(ConnectionClosed) as closed:
        socket.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


def test_the_socket_takes_the_bearer_header_instead_of_the_query(
    http: httpx.Client, fast_url: str
) -> None:
    session_id = start_turn(http, fast_url, "minara-test:echo hi")["session_id"]
    with Socket(fast_url, token=None, headers=AUTH) as socket:
        assert socket.subscribe(session_id)["key"] == session_id


def test_a_wrong_query_token_is_not_saved_by_a_right_header(fast_url: str) -> None:
    # The query token is the one a browser sends; it decides when present.
    with Socket(fast_url, token="wrong", headers=AUTH) as socket, pytest.raises(ConnectionClosed):
        socket.recv(timeout=5)
