"""RFC 8414 discovery of the authorization server named by a manifest's `auth.oauth.issuer`."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata, get_well_known_url

from talkie_tui.protocol.errors import TalkieError
from talkie_tui.protocol.manifest import check_secure, describe_transport_error

from .errors import SignInError

__all__ = ["AuthServer", "discover_auth_server", "discovery_urls"]

_MAX_METADATA_BYTES = 256 * 1024
_TIMEOUT = httpx.Timeout(15.0, connect=10.0)


@dataclass(frozen=True, slots=True)
class AuthServer:
    """What talkie needs from the authorization server's metadata, checked."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    revocation_endpoint: str | None = None
    iss_parameter_supported: bool = False
    """RFC 9207: the server says it adds `iss` to every authorization response."""


def discovery_urls(issuer: str) -> list[str]:
    """Where to look for the metadata: RFC 8414 (path inserted), then OpenID Connect forms."""
    urls = [
        get_well_known_url(issuer, external=True),
        get_well_known_url(issuer, external=True, suffix="openid-configuration"),
        issuer.rstrip("/") + "/.well-known/openid-configuration",  # OIDC appends after the path
    ]
    return list(dict.fromkeys(urls))


async def discover_auth_server(
    http: httpx.AsyncClient, issuer: str, *, allow_private_http: bool = False
) -> AuthServer:
    """Fetch and check the metadata of `issuer` (§2.1): same issuer, S256, secure endpoints."""
    _check_url(issuer, "The sign-in issuer", allow_private_http)
    problems: list[str] = []
    for url in discovery_urls(issuer):
        try:
            response = await http.get(url, timeout=_TIMEOUT, follow_redirects=False)
        except httpx.HTTPError as error:
            raise describe_transport_error(error, issuer) from error
        if response.status_code != 200:
            problems.append(f"{url} answered HTTP {response.status_code}")
            continue
        if len(response.content) > _MAX_METADATA_BYTES:
            raise SignInError(f"The sign-in server's metadata at {url} is too large; refused.")
        try:
            data = json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            problems.append(f"{url} is not JSON")
            continue
        if isinstance(data, dict):
            return _checked(data, issuer, url, allow_private_http)
        problems.append(f"{url} is not a JSON object")
    raise SignInError(
        f"The sign-in server {issuer} publishes no usable metadata ({'; '.join(problems)}).",
        retryable=True,
    )


def _checked(
    data: dict[str, object], issuer: str, url: str, allow_private_http: bool
) -> AuthServer:
    # RFC 8414 §3.3: the metadata must name exactly the issuer we were sent to, or an attacker
    # who controls one well-known document could impersonate another authorization server.
    if data.get("issuer") != issuer:
        raise SignInError(
            f"The sign-in server's metadata at {url} names the issuer {data.get('issuer')!r}, "
            f"not {issuer!r}; refusing to sign in there."
        )
    metadata = AuthorizationServerMetadata(data)
    try:
        metadata.validate_authorization_endpoint()
        metadata.validate_token_endpoint()
        metadata.validate_revocation_endpoint()
        metadata.validate_code_challenge_methods_supported()
    except ValueError as error:
        raise SignInError(f"The sign-in server's metadata is invalid: {error}.") from None
    methods = data.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        raise SignInError(
            f"The sign-in server {issuer} does not offer PKCE with S256, which Talkie requires."
        )
    authorization = str(data["authorization_endpoint"])
    token = str(data["token_endpoint"])
    revocation = data.get("revocation_endpoint")
    for name, endpoint in (("authorization", authorization), ("token", token)):
        _check_url(endpoint, f"The {name} endpoint", allow_private_http)
    if isinstance(revocation, str):
        _check_url(revocation, "The revocation endpoint", allow_private_http)
    return AuthServer(
        issuer=issuer,
        authorization_endpoint=authorization,
        token_endpoint=token,
        revocation_endpoint=revocation if isinstance(revocation, str) else None,
        iss_parameter_supported=data.get("authorization_response_iss_parameter_supported") is True,
    )


def _check_url(url: str, what: str, allow_private_http: bool) -> None:
    try:
        parsed = httpx.URL(url)
        if not parsed.host:
            raise SignInError(f"{what} {url!r} has no host.")
        check_secure(parsed, allow_private_http=allow_private_http)
    except httpx.InvalidURL as error:
        raise SignInError(f"{what} {url!r} is not a valid address: {error}.") from None
    except TalkieError as error:
        raise SignInError(f"{what} is not safe: {error.message}") from None
