"""One authorization request (PKCE S256, state bound to the server) and the checks of its answer.

Pure: no network here. `begin_sign_in` makes the URL to open; `read_callback` turns the URL the
browser came back to (through the loopback receiver, or pasted) into an authorization code, or
refuses it (RFC 6749 §10.12 state, RFC 9207 `iss`, the server's error with its description).
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urlsplit

from authlib.oauth2.rfc7636 import create_s256_code_challenge

from talkie_tui.auth.errors import CallbackRejected, SignInError
from talkie_tui.auth.metadata import AuthServer
from talkie_tui.i18n import N_, _

__all__ = ["PendingSignIn", "begin_sign_in", "read_callback"]

OFFLINE_SCOPE = "offline_access"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True, slots=True)
class PendingSignIn:
    """Everything an answer must match: the server it was started for, its state and verifier."""

    server_id: str
    auth_server: AuthServer
    client_id: str
    redirect_uri: str
    scope: str
    state: str = field(repr=False)
    verifier: str = field(repr=False)
    authorization_url: str = field(repr=False)
    started: float = 0.0


def begin_sign_in(
    auth_server: AuthServer,
    *,
    server_id: str,
    client_id: str,
    redirect_uri: str,
    scopes: list[str],
) -> PendingSignIn:
    """A fresh authorization request for `server_id` with its own state and PKCE verifier."""
    state = secrets.token_urlsafe(32)  # 256 bits, far above the 128 the issue asks for
    verifier = secrets.token_urlsafe(64)  # 86 characters of the RFC 7636 alphabet
    scope = " ".join(dict.fromkeys(scopes))
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "state": state,
        "code_challenge": create_s256_code_challenge(verifier),
        "code_challenge_method": "S256",
    }
    if OFFLINE_SCOPE in scopes:
        # Without consent many servers (oidc-provider among them) drop offline_access and
        # give no refresh token: the person would have to sign in again every hour.
        params["prompt"] = "consent"
    endpoint = auth_server.authorization_endpoint
    separator = "&" if urlsplit(endpoint).query else "?"
    return PendingSignIn(
        server_id=server_id,
        auth_server=auth_server,
        client_id=client_id,
        redirect_uri=redirect_uri,
        scope=scope,
        state=state,
        verifier=verifier,
        authorization_url=f"{endpoint}{separator}{urlencode(params)}",
        started=time.monotonic(),
    )


def callback_params(url: str) -> dict[str, str]:
    """The query of a callback URL, or of a pasted bare query (`code=…&state=…`)."""
    text = url.strip()
    # A whole URL starts with its scheme; a bare query may hold "://" only inside a value.
    is_url = _SCHEME.match(text) is not None or text.startswith("/")
    query = urlsplit(text).query if is_url else text.lstrip("?")
    return {key: values[0] for key, values in parse_qs(query, keep_blank_values=True).items()}


def read_callback(pending: PendingSignIn, url: str) -> str:
    """The authorization code of a callback that answers `pending`; refuses anything else."""
    params = callback_params(url)
    given_state = params.get("state", "")
    if not given_state or not secrets.compare_digest(given_state.encode(), pending.state.encode()):
        raise CallbackRejected(
            _(
                "This answer does not belong to the sign-in in progress (its state differs). "
                "It may come from an old browser tab; use the newest sign-in page."
            ),
            code="state_mismatch",
        )
    issuer = pending.auth_server.issuer
    given_iss = params.get("iss")
    # RFC 9207: the issuer the answer names must be the one we sent the person to; otherwise
    # another authorization server may be trying to slip us its code (a mix-up attack).
    if given_iss is not None and given_iss != issuer:
        raise CallbackRejected(
            _("The answer names the issuer {given}, not {expected}; refused.").format(
                given=repr(given_iss), expected=repr(issuer)
            ),
            code="issuer_mismatch",
        )
    if given_iss is None and pending.auth_server.iss_parameter_supported:
        raise CallbackRejected(
            _("The answer lacks the issuer that {issuer} promises to include; refused.").format(
                issuer=issuer
            ),
            code="issuer_missing",
        )
    if "error" in params:
        error = params["error"]
        words = _ERROR_WORDS.get(error)
        description = params.get("error_description") or (_(words) if words else "")
        text = (
            _("The sign-in server refused: {description} ({code}).").format(
                description=description.rstrip("."), code=error
            )
            if description
            else _("The sign-in server refused ({code}).").format(code=error)
        )
        raise SignInError(
            text,
            code=error,
            retryable=error in ("temporarily_unavailable", "server_error"),
        )
    code = params.get("code", "")
    if not code:
        raise CallbackRejected(_("The answer carries no authorization code."), code="no_code")
    return code


_ERROR_WORDS = {
    "access_denied": N_("access was denied"),
    "invalid_scope": N_("the requested access is not available"),
    "unauthorized_client": N_("this client is not allowed to sign in here"),
    "server_error": N_("the sign-in server failed"),
    "temporarily_unavailable": N_("the sign-in server is busy"),
}
