"""The test authorization server behaves like the AS talkie's sign-in is written against.

A hand-rolled client (plain httpx, PKCE S256) walks the code flow on the real oidc-provider:
these tests pin the AS facts the client relies on (refresh tokens need `prompt=consent`, `iss`
in the callback, rotation with reuse detection, revocation reaching the access tokens), and
prove that the shipped Client ID Metadata Document works with a real CIMD implementation.
"""

from __future__ import annotations

import json
import secrets

import httpx
import pytest

from tests.oauth_provider import (
    SHIPPED_CIMD,
    OidcProvider,
    Pkce,
    authorization_url,
    browse_to_callback,
    callback_params,
    exchange_code,
    introspect,
    refresh,
    revoke,
    sign_in,
)

pytestmark = pytest.mark.oauth


def test_metadata_advertises_what_the_client_needs(oidc_provider: OidcProvider) -> None:
    for path in ("oauth-authorization-server", "openid-configuration"):
        response = httpx.get(f"{oidc_provider.issuer}/.well-known/{path}", trust_env=False)
        assert response.status_code == 200
        metadata = response.json()
        assert metadata["issuer"] == oidc_provider.issuer
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["authorization_response_iss_parameter_supported"] is True
        assert metadata["revocation_endpoint"].startswith(oidc_provider.issuer)
        assert metadata["introspection_endpoint"].startswith(oidc_provider.issuer)
        assert {"talkie", "offline_access"} <= set(metadata["scopes_supported"])
        assert "client_id_metadata_document_supported" not in metadata


def test_consented_code_flow_gives_refresh_token_and_callback_carries_iss(
    oidc_provider: OidcProvider,
) -> None:
    pkce, state = Pkce.new(), secrets.token_urlsafe(16)
    # Any loopback port matches the registered http://127.0.0.1/callback (native client).
    redirect_uri = "http://127.0.0.1:40123/callback"
    url = authorization_url(
        oidc_provider, state=state, code_challenge=pkce.challenge, redirect_uri=redirect_uri
    )

    callback = browse_to_callback(url, user="alice")

    assert callback.startswith(redirect_uri + "?")
    params = callback_params(callback)
    assert params["state"] == state
    assert params["iss"] == oidc_provider.issuer
    response = exchange_code(oidc_provider, params["code"], pkce.verifier, redirect_uri)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"] == "Bearer"
    assert tokens["refresh_token"]
    assert tokens["expires_in"] <= oidc_provider.access_ttl
    info = introspect(oidc_provider, tokens["access_token"])
    assert info["active"] is True
    assert info["sub"] == "alice"
    assert info["aud"] == oidc_provider.audience
    assert "talkie" in info["scope"].split()


def test_without_prompt_consent_there_is_no_refresh_token(oidc_provider: OidcProvider) -> None:
    pkce, state = Pkce.new(), secrets.token_urlsafe(16)
    url = authorization_url(oidc_provider, state=state, code_challenge=pkce.challenge, prompt=None)

    params = callback_params(browse_to_callback(url))
    tokens = exchange_code(oidc_provider, params["code"], pkce.verifier).json()

    assert tokens["access_token"]
    assert "refresh_token" not in tokens


def test_code_exchange_needs_the_pkce_verifier(oidc_provider: OidcProvider) -> None:
    pkce, state = Pkce.new(), secrets.token_urlsafe(16)
    url = authorization_url(oidc_provider, state=state, code_challenge=pkce.challenge)
    params = callback_params(browse_to_callback(url))

    response = exchange_code(oidc_provider, params["code"], Pkce.new().verifier)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_deny_gives_access_denied_callback_with_iss(oidc_provider: OidcProvider) -> None:
    state = secrets.token_urlsafe(16)
    url = authorization_url(oidc_provider, state=state, code_challenge=Pkce.new().challenge)

    params = callback_params(browse_to_callback(url, deny=True))

    assert params["error"] == "access_denied"
    assert params["state"] == state
    assert params["iss"] == oidc_provider.issuer
    assert "code" not in params


def test_unregistered_redirect_uri_shows_an_error_page(oidc_provider: OidcProvider) -> None:
    url = authorization_url(
        oidc_provider,
        state="s",
        code_challenge=Pkce.new().challenge,
        redirect_uri="http://localhost:40123/callback",  # localhost is not 127.0.0.1
    )

    with pytest.raises(AssertionError, match="invalid_redirect_uri"):
        browse_to_callback(url)


def test_refresh_rotates_and_reuse_revokes_the_grant(oidc_provider: OidcProvider) -> None:
    first = sign_in(oidc_provider)

    second = refresh(oidc_provider, first["refresh_token"])
    assert second.status_code == 200, second.text
    rotated = second.json()
    assert rotated["refresh_token"] != first["refresh_token"]
    assert introspect(oidc_provider, rotated["access_token"])["active"] is True

    replay = refresh(oidc_provider, first["refresh_token"])

    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    # Reuse detection revoked the whole grant: the rotated tokens are dead too.
    assert refresh(oidc_provider, rotated["refresh_token"]).status_code == 400
    assert introspect(oidc_provider, rotated["access_token"]) == {"active": False}


def test_revoking_the_refresh_token_ends_its_access_tokens(oidc_provider: OidcProvider) -> None:
    tokens = sign_in(oidc_provider)
    assert introspect(oidc_provider, tokens["access_token"])["active"] is True

    response = revoke(oidc_provider, tokens["refresh_token"], "refresh_token")

    assert response.status_code == 200
    assert introspect(oidc_provider, tokens["access_token"]) == {"active": False}
    assert refresh(oidc_provider, tokens["refresh_token"]).status_code == 400


def test_introspection_needs_the_resource_servers_credentials(
    oidc_provider: OidcProvider,
) -> None:
    tokens = sign_in(oidc_provider)

    response = httpx.post(
        oidc_provider.endpoint("introspection"),
        data={"token": tokens["access_token"]},
        auth=(oidc_provider.resource_client_id, "wrong secret"),
        trust_env=False,
    )

    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


def test_shipped_client_id_metadata_document_signs_in_without_registration(
    cimd_provider: OidcProvider,
) -> None:
    document = json.loads(SHIPPED_CIMD.read_text(encoding="utf-8"))
    assert cimd_provider.client_id == document["client_id"]
    assert cimd_provider.metadata["client_id_metadata_document_supported"] is True

    tokens = sign_in(cimd_provider, user="bob")

    assert tokens["refresh_token"]
    info = introspect(cimd_provider, tokens["access_token"])
    assert info["active"] is True
    assert info["client_id"] == document["client_id"]
    assert info["sub"] == "bob"
    rotated = refresh(cimd_provider, tokens["refresh_token"])
    assert rotated.status_code == 200, rotated.text


def test_cimd_provider_refuses_a_client_id_it_cannot_fetch(cimd_provider: OidcProvider) -> None:
    other = OidcProvider(**{**vars(cimd_provider), "client_id": "https://elsewhere.test/c.json"})
    url = authorization_url(other, state="s", code_challenge=Pkce.new().challenge)

    with pytest.raises(AssertionError, match="metadata document fetch failed"):
        browse_to_callback(url)


def test_cimd_scope_limits_what_the_client_may_request(cimd_provider: OidcProvider) -> None:
    # The shipped document says `scope: "talkie offline_access"`, so `openid` is refused.
    state = secrets.token_urlsafe(16)
    url = authorization_url(
        cimd_provider,
        state=state,
        code_challenge=Pkce.new().challenge,
        scope="openid talkie offline_access",
    )

    params = callback_params(browse_to_callback(url))

    assert params["error"] == "invalid_scope"
    assert params["state"] == state
