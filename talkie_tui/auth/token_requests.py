"""Requests to the authorization server's token and revocation endpoints (RFC 6749, RFC 7009).

Tokens never appear in an error message: only the server's `error` and `error_description`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import httpx

from talkie_tui.auth.errors import GrantInvalid, SignInError
from talkie_tui.core.urls import origin_of
from talkie_tui.i18n import _
from talkie_tui.protocol.net.failures import network_errors

__all__ = ["TokenSet", "exchange_code", "refresh_grant", "revoke_token"]

_TIMEOUT = httpx.Timeout(20.0, connect=10.0)
_MAX_BODY = 64 * 1024


@dataclass(frozen=True, slots=True)
class TokenSet:
    """A token response: the access token, when it expires, and the (rotated) refresh token."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    """Monotonic-clock deadline of the access token, when the server said `expires_in`."""
    lifetime: float | None = None
    scope: str = ""

    def expires_soon(self, now: float | None = None) -> bool:
        """True when the access token is expired or about to be (a tenth of its life left)."""
        if self.expires_at is None or self.lifetime is None:
            return False
        leeway = min(30.0, self.lifetime / 10)
        return (now if now is not None else time.monotonic()) >= self.expires_at - leeway


async def exchange_code(
    http: httpx.AsyncClient,
    token_endpoint: str,
    *,
    client_id: str,
    code: str,
    verifier: str,
    redirect_uri: str,
) -> TokenSet:
    """Trade an authorization code and its PKCE verifier for tokens."""
    return await _token_request(
        http,
        token_endpoint,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
        },
    )


async def refresh_grant(
    http: httpx.AsyncClient, token_endpoint: str, *, client_id: str, refresh_token: str
) -> TokenSet:
    """A new access token (and, where the server rotates them, a new refresh token)."""
    tokens = await _token_request(
        http,
        token_endpoint,
        {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id},
    )
    if tokens.refresh_token is None:
        # RFC 6749 §6: no new refresh token means the old one stays valid.
        return TokenSet(
            tokens.access_token, refresh_token, tokens.expires_at, tokens.lifetime, tokens.scope
        )
    return tokens


async def revoke_token(
    http: httpx.AsyncClient,
    revocation_endpoint: str,
    *,
    client_id: str,
    token: str,
    hint: str = "refresh_token",
) -> None:
    """Ask the server to revoke `token` (RFC 7009); raises SignInError when it refuses."""
    with network_errors(origin_of(revocation_endpoint)):
        response = await http.post(
            revocation_endpoint,
            data={"token": token, "token_type_hint": hint, "client_id": client_id},
            timeout=_TIMEOUT,
            follow_redirects=False,
        )
    if response.status_code != 200:
        text = _("The sign-in server would not revoke the sign-in: {words} (HTTP {status}).")
        raise _refusal(response, text)


async def _token_request(
    http: httpx.AsyncClient, token_endpoint: str, form: dict[str, str]
) -> TokenSet:
    started = time.monotonic()
    with network_errors(origin_of(token_endpoint)):
        response = await http.post(
            token_endpoint,
            data=form,
            headers={"Accept": "application/json"},
            timeout=_TIMEOUT,
            follow_redirects=False,
        )
    if response.status_code != 200:
        raise _refusal(
            response, _("The sign-in server would not issue tokens: {words} (HTTP {status}).")
        )
    data = _json_object(response)
    access_token = data.get("access_token") if data else None
    if not isinstance(access_token, str) or not access_token:
        raise SignInError(_("The sign-in server's token response has no access token."))
    token_type = data.get("token_type", "Bearer") if data else "Bearer"
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise SignInError(
            _("The sign-in server issued a {type} token; Talkie needs Bearer.").format(
                type=repr(token_type)
            )
        )
    refresh = data.get("refresh_token") if data else None
    expires_in = data.get("expires_in") if data else None
    lifetime = float(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else None
    scope = data.get("scope") if data else None
    return TokenSet(
        access_token=access_token,
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        expires_at=started + lifetime if lifetime is not None else None,
        lifetime=lifetime,
        scope=scope if isinstance(scope, str) else "",
    )


def _json_object(response: httpx.Response) -> dict[str, object] | None:
    if len(response.content) > _MAX_BODY:
        return None
    try:
        data = json.loads(response.content)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _refusal(response: httpx.Response, template: str) -> SignInError:
    """The server's own words (RFC 6749 §5.2) as an error; invalid_grant means sign in again.

    `template` is the translated sentence, with the placeholders `{words}` and `{status}`.
    """
    data = _json_object(response) or {}
    error = data.get("error")
    description = data.get("error_description")
    code = error if isinstance(error, str) else f"http_{response.status_code}"
    words = description if isinstance(description, str) and description else code
    message = template.format(words=words, status=response.status_code)
    if code == "invalid_grant":
        return GrantInvalid(message + " " + _("Sign in again."), code=code)
    retryable = response.status_code >= 500 or response.status_code == 429
    return SignInError(message, code=code, retryable=retryable)
