"""The authorization request and the checks of its answer (§2.1, RFC 7636, RFC 9207)."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qs, urlsplit

import pytest

from talkie_tui.auth.errors import CallbackRejected, SignInError
from talkie_tui.auth.flow import begin_sign_in, callback_params, read_callback
from talkie_tui.auth.metadata import AuthServer

ISSUER = "https://login.example.com"
SERVER = AuthServer(
    issuer=ISSUER,
    authorization_endpoint=f"{ISSUER}/auth",
    token_endpoint=f"{ISSUER}/token",
    iss_parameter_supported=True,
)
REDIRECT = "http://127.0.0.1:45678/callback"


def _pending(server: AuthServer = SERVER, scopes: list[str] | None = None):
    return begin_sign_in(
        server,
        server_id="crm.example.com",
        client_id="https://talkie.example/oauth/client.json",
        redirect_uri=REDIRECT,
        scopes=scopes if scopes is not None else ["talkie", "offline_access"],
    )


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_the_request_carries_pkce_s256_state_and_consent() -> None:
    pending = _pending()
    query = _query(pending.authorization_url)
    assert pending.authorization_url.startswith(f"{ISSUER}/auth?")
    assert query["response_type"] == "code"
    assert query["code_challenge_method"] == "S256"
    digest = hashlib.sha256(pending.verifier.encode()).digest()
    assert query["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert 43 <= len(pending.verifier) <= 128
    assert query["state"] == pending.state
    assert len(base64.urlsafe_b64decode(pending.state + "==")) * 8 >= 128
    assert query["redirect_uri"] == REDIRECT
    assert query["scope"] == "talkie offline_access"
    assert query["prompt"] == "consent"  # else no refresh token from many servers


def test_no_consent_prompt_without_offline_access() -> None:
    assert "prompt" not in _query(_pending(scopes=["talkie"]).authorization_url)


def test_every_request_has_its_own_state_and_verifier() -> None:
    first, second = _pending(), _pending()
    assert first.state != second.state and first.verifier != second.verifier


def test_secrets_stay_out_of_repr() -> None:
    pending = _pending()
    assert pending.state not in repr(pending) and pending.verifier not in repr(pending)


def test_an_authorization_endpoint_with_a_query_keeps_it() -> None:
    server = AuthServer(ISSUER, f"{ISSUER}/auth?tenant=a", f"{ISSUER}/token")
    url = _pending(server).authorization_url
    assert url.startswith(f"{ISSUER}/auth?tenant=a&") and _query(url)["tenant"] == "a"


def test_a_matching_answer_gives_the_code() -> None:
    pending = _pending()
    url = f"{REDIRECT}?code=abc&state={pending.state}&iss={ISSUER}"
    assert read_callback(pending, url) == "abc"


def test_a_pasted_bare_query_is_accepted() -> None:
    pending = _pending()
    assert read_callback(pending, f"  code=abc&state={pending.state}&iss={ISSUER}\n") == "abc"


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("code=abc&state=WRONG&iss=" + ISSUER, "state_mismatch"),
        ("code=abc&iss=" + ISSUER, "state_mismatch"),
        ("code=abc&state={state}&iss=https://evil.example.com", "issuer_mismatch"),
        ("code=abc&state={state}&iss=" + ISSUER + "/", "issuer_mismatch"),
        ("code=abc&state={state}", "issuer_missing"),
        ("state={state}&iss=" + ISSUER, "no_code"),
    ],
)
def test_answers_that_do_not_match_are_refused(query: str, code: str) -> None:
    pending = _pending()
    with pytest.raises(CallbackRejected) as refused:
        read_callback(pending, f"{REDIRECT}?{query.format(state=pending.state)}")
    assert refused.value.code == code


def test_a_missing_iss_is_fine_when_the_server_does_not_promise_it() -> None:
    server = AuthServer(ISSUER, f"{ISSUER}/auth", f"{ISSUER}/token", iss_parameter_supported=False)
    pending = _pending(server)
    assert read_callback(pending, f"{REDIRECT}?code=c&state={pending.state}") == "c"


def test_an_error_answer_shows_the_servers_description() -> None:
    pending = _pending()
    url = (
        f"{REDIRECT}?error=access_denied&error_description=End-User+aborted+interaction"
        f"&state={pending.state}&iss={ISSUER}"
    )
    with pytest.raises(SignInError) as refused:
        read_callback(pending, url)
    assert refused.value.code == "access_denied"
    assert "End-User aborted interaction" in refused.value.message
    assert not refused.value.retryable


def test_an_error_description_cannot_smuggle_terminal_controls() -> None:
    pending = _pending()
    url = f"{REDIRECT}?error=x&error_description=%1b%5b2Jgone&state={pending.state}&iss={ISSUER}"
    with pytest.raises(SignInError) as refused:
        read_callback(pending, url)
    assert "\x1b" not in refused.value.message


def test_an_error_answer_with_a_wrong_state_is_a_state_mismatch() -> None:
    """A forged error must not end someone else's sign-in with the forger's words."""
    pending = _pending()
    with pytest.raises(CallbackRejected) as refused:
        read_callback(pending, f"{REDIRECT}?error=access_denied&state=forged&iss={ISSUER}")
    assert refused.value.code == "state_mismatch"


def test_callback_params_take_the_first_value() -> None:
    assert callback_params("http://h/callback?a=1&a=2&b=") == {"a": "1", "b": ""}
