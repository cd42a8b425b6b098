"""RFC 8414 discovery of the authorization server named by a manifest's `auth.oauth.issuer`."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata, get_well_known_url

from talkie_tui.auth.errors import SignInError
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import N_, _
from talkie_tui.protocol.net.addresses import check_secure
from talkie_tui.protocol.net.failures import network_errors

__all__ = ["AuthServer", "discover_auth_server", "discovery_urls"]

_MAX_METADATA_BYTES = 256 * 1024
_TIMEOUT = httpx.Timeout(15.0, connect=10.0)
# What `_check_url` checks, as the subject of its sentences (translated where shown).
_ISSUER = N_("The sign-in issuer")
_ENDPOINTS = {
    "authorization": N_("The authorization endpoint"),
    "token": N_("The token endpoint"),
    "revocation": N_("The revocation endpoint"),
}


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
    _check_url(issuer, _ISSUER, allow_private_http)
    problems: list[str] = []
    for url in discovery_urls(issuer):
        with network_errors(issuer):
            response = await http.get(url, timeout=_TIMEOUT, follow_redirects=False)
        if response.status_code != 200:
            problems.append(
                _("{url} answered HTTP {status}").format(url=url, status=response.status_code)
            )
            continue
        if len(response.content) > _MAX_METADATA_BYTES:
            raise SignInError(
                _("The sign-in server's metadata at {url} is too large; refused.").format(url=url)
            )
        try:
            data = json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            problems.append(_("{url} is not JSON").format(url=url))
            continue
        if isinstance(data, dict):
            return _checked(data, issuer, url, allow_private_http)
        problems.append(_("{url} is not a JSON object").format(url=url))
    raise SignInError(
        _("The sign-in server {issuer} publishes no usable metadata ({problems}).").format(
            issuer=issuer, problems="; ".join(problems)
        ),
        retryable=True,
    )


def _checked(
    data: dict[str, object], issuer: str, url: str, allow_private_http: bool
) -> AuthServer:
    # RFC 8414 §3.3: the metadata must name exactly the issuer we were sent to, or an attacker
    # who controls one well-known document could impersonate another authorization server.
    if data.get("issuer") != issuer:
        raise SignInError(
            _(
                "The sign-in server's metadata at {url} names the issuer {given}, not {expected}; "
                "refusing to sign in there."
            ).format(url=url, given=repr(data.get("issuer")), expected=repr(issuer))
        )
    metadata = AuthorizationServerMetadata(data)
    try:
        metadata.validate_authorization_endpoint()
        metadata.validate_token_endpoint()
        metadata.validate_revocation_endpoint()
        metadata.validate_code_challenge_methods_supported()
    except ValueError as error:
        raise SignInError(
            _("The sign-in server's metadata is invalid: {error}.").format(error=error)
        ) from None
    methods = data.get("code_challenge_methods_supported")
    if not isinstance(methods, list) or "S256" not in methods:
        raise SignInError(
            _(
                "The sign-in server {issuer} does not offer PKCE with S256, which Talkie requires."
            ).format(issuer=issuer)
        )
    authorization = str(data["authorization_endpoint"])
    token = str(data["token_endpoint"])
    revocation = data.get("revocation_endpoint")
    for name, endpoint in (("authorization", authorization), ("token", token)):
        _check_url(endpoint, _ENDPOINTS[name], allow_private_http)
    if isinstance(revocation, str):
        _check_url(revocation, _ENDPOINTS["revocation"], allow_private_http)
    return AuthServer(
        issuer=issuer,
        authorization_endpoint=authorization,
        token_endpoint=token,
        revocation_endpoint=revocation if isinstance(revocation, str) else None,
        iss_parameter_supported=data.get("authorization_response_iss_parameter_supported") is True,
    )


def _check_url(url: str, what: str, allow_private_http: bool) -> None:
    """Refuse an unusable or insecure address; `what` is one of the N_ subjects above."""
    subject = _(what)
    try:
        parsed = httpx.URL(url)
        if not parsed.host:
            raise SignInError(_("{what} {url} has no host.").format(what=subject, url=repr(url)))
        check_secure(parsed, allow_private_http=allow_private_http)
    except httpx.InvalidURL as error:
        raise SignInError(
            _("{what} {url} is not a valid address: {error}.").format(
                what=subject, url=repr(url), error=error
            )
        ) from None
    except TalkieError as error:
        raise SignInError(
            _("{what} is not safe: {error}").format(what=subject, error=error.message)
        ) from None
