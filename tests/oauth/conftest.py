"""Fixtures of the sign-in tests: the real authorization server (oidc-provider) on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.oauth_provider import SHIPPED_CIMD, OidcProvider, start_oidc_provider

# Short enough that a test can wait for an access token to expire.
ACCESS_TTL = 4


@pytest.fixture(scope="session")
def oidc_provider() -> Iterator[OidcProvider]:
    """oidc-provider with the talkie client pre-registered; access tokens live ACCESS_TTL s."""
    provider = start_oidc_provider(access_ttl=ACCESS_TTL)
    yield provider
    provider.stop()


@pytest.fixture(scope="session")
def cimd_provider() -> Iterator[OidcProvider]:
    """oidc-provider that knows the talkie client only through the shipped `oauth/client.json`."""
    provider = start_oidc_provider(access_ttl=ACCESS_TTL, cimd_file=SHIPPED_CIMD)
    yield provider
    provider.stop()
