"""The reference server checks OAuth access tokens with the real AS (RFC 7662 introspection)."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import pytest

from tests.helpers import AUTH, TEST_TOKEN, assert_error, run_body
from tests.oauth_provider import (
    OidcProvider,
    oauth_config,
    revoke,
    sign_in,
    start_oidc_provider,
)

pytestmark = pytest.mark.oauth

ACCESS_TTL = 4
STATUS = "/api/talkie/status"


@pytest.fixture
def oauth_server(devserver: Callable[..., str], oidc_provider: OidcProvider) -> str:
    """A reference server that accepts the AS's access tokens and the dev token."""
    return devserver(**oauth_config(oidc_provider, dev_token=TEST_TOKEN))


def bearer(token: str) -> dict[str, str]:
    """The Authorization header for `token`."""
    return {"Authorization": f"Bearer {token}"}


def assert_invalid_token(response: httpx.Response) -> None:
    """401 with the §3 envelope and the RFC 6750 invalid_token challenge."""
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == 'Bearer realm="talkie", error="invalid_token"'
    assert response.json()["error"]["retryable"] is False


def test_valid_token_gets_status_naming_the_user(
    oauth_server: str, oidc_provider: OidcProvider
) -> None:
    tokens = sign_in(oidc_provider, user="alice")

    response = httpx.get(oauth_server + STATUS, headers=bearer(tokens["access_token"]))

    assert response.status_code == 200, response.text
    assert response.json()["user"] == {"id": "alice", "name": "alice"}


def test_each_oauth_user_has_their_own_threads(
    oauth_server: str, oidc_provider: OidcProvider
) -> None:
    alice = bearer(sign_in(oidc_provider, user="alice")["access_token"])
    bob = bearer(sign_in(oidc_provider, user="bob")["access_token"])
    with httpx.Client(base_url=oauth_server, timeout=10.0) as http:
        assert http.get(STATUS, headers=bob).json()["user"]["id"] == "bob"
        created = http.post(
            "/api/talkie/run", headers=alice, json=run_body("hello", thread_id="t_alice_only")
        )
        assert created.status_code == 200, created.text

        assert http.get("/api/talkie/threads/t_alice_only", headers=alice).status_code == 200
        assert_error(http.get("/api/talkie/threads/t_alice_only", headers=bob), 404, "not_found")


def test_dev_token_still_works_next_to_oauth(oauth_server: str) -> None:
    response = httpx.get(oauth_server + STATUS, headers=AUTH)

    assert response.status_code == 200
    assert response.json()["user"]["id"] == "u1"


def test_missing_token_asks_to_sign_in(oauth_server: str) -> None:
    response = httpx.get(oauth_server + STATUS)

    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == 'Bearer realm="talkie"'


def test_garbage_token_is_refused(oauth_server: str) -> None:
    assert_invalid_token(httpx.get(oauth_server + STATUS, headers=bearer("not-a-real-token")))


def test_expired_token_is_refused(oauth_server: str, oidc_provider: OidcProvider) -> None:
    tokens = sign_in(oidc_provider)
    headers = bearer(tokens["access_token"])
    assert httpx.get(oauth_server + STATUS, headers=headers).status_code == 200

    time.sleep(ACCESS_TTL + 1.5)

    assert_invalid_token(httpx.get(oauth_server + STATUS, headers=headers))


def test_revoking_the_refresh_token_ends_the_access_token_at_once(
    oauth_server: str, oidc_provider: OidcProvider
) -> None:
    tokens = sign_in(oidc_provider)
    headers = bearer(tokens["access_token"])
    # A first success proves nothing positive is cached past the revocation below.
    assert httpx.get(oauth_server + STATUS, headers=headers).status_code == 200

    assert revoke(oidc_provider, tokens["refresh_token"], "refresh_token").status_code == 200

    assert_invalid_token(httpx.get(oauth_server + STATUS, headers=headers))


def test_refresh_token_is_not_an_access_token(
    oauth_server: str, oidc_provider: OidcProvider
) -> None:
    tokens = sign_in(oidc_provider)

    assert_invalid_token(httpx.get(oauth_server + STATUS, headers=bearer(tokens["refresh_token"])))


def test_token_for_another_audience_is_refused(
    devserver: Callable[..., str], oidc_provider: OidcProvider
) -> None:
    url = devserver(**oauth_config(oidc_provider, oauth_audience="https://other.test/api"))
    tokens = sign_in(oidc_provider)

    assert_invalid_token(httpx.get(url + STATUS, headers=bearer(tokens["access_token"])))


def test_wrong_introspection_secret_is_an_upstream_failure(
    devserver: Callable[..., str], oidc_provider: OidcProvider
) -> None:
    url = devserver(**oauth_config(oidc_provider, oauth_client_secret="wrong"))
    tokens = sign_in(oidc_provider)

    response = httpx.get(url + STATUS, headers=bearer(tokens["access_token"]))

    assert_error(response, 503, "upstream_unavailable")


def test_metadata_for_another_issuer_is_not_used(
    devserver: Callable[..., str], oidc_provider: OidcProvider, caplog: pytest.LogCaptureFixture
) -> None:
    # A trailing slash makes it another issuer: the AS's metadata must not be used (RFC 8414 §3.3).
    url = devserver(**oauth_config(oidc_provider, oauth_issuer=oidc_provider.issuer + "/"))
    tokens = sign_in(oidc_provider)

    response = httpx.get(url + STATUS, headers=bearer(tokens["access_token"]))

    assert_error(response, 503, "upstream_unavailable")
    assert "names issuer" in caplog.text


def test_authorization_server_down_is_retryable_503(devserver: Callable[..., str]) -> None:
    provider = start_oidc_provider(access_ttl=60)
    try:
        url = devserver(**oauth_config(provider))
        headers = bearer(sign_in(provider)["access_token"])
        assert httpx.get(url + STATUS, headers=headers).status_code == 200
    finally:
        provider.stop()

    response = httpx.get(url + STATUS, headers=headers)

    error = assert_error(response, 503, "upstream_unavailable")
    assert error["retryable"] is True
    assert "sign-in service" in error["message"]
    assert "access_token" not in response.text


def test_failed_discovery_is_tried_again_on_a_later_request(
    devserver: Callable[..., str],
) -> None:
    # Learn a free port and the AS's issuer on it, then take the AS away again.
    gone = start_oidc_provider(access_ttl=60)
    gone.stop()
    port = int(gone.issuer.rsplit(":", 1)[1])
    url = devserver(**oauth_config(gone))
    # The first request cannot discover the metadata...
    assert_error(httpx.get(url + STATUS, headers=bearer("x")), 503, "upstream_unavailable")

    back = start_oidc_provider(
        access_ttl=60, port=port, resource_client_secret=gone.resource_client_secret
    )
    try:
        assert back.issuer == gone.issuer
        headers = bearer(sign_in(back, user="carol")["access_token"])

        response = httpx.get(url + STATUS, headers=headers)
    finally:
        back.stop()

    # ...and a later one discovers it once the AS is back.
    assert response.status_code == 200, response.text
    assert response.json()["user"]["id"] == "carol"
