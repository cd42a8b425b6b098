"""Sign-in end to end: talkie against the real oidc-provider and the reference server (§2.1).

Everything real: the authorization server (node, oidc-provider 9.13.3), its login and consent
forms driven over HTTP, talkie's loopback receiver, the `talkie` command in its own processes,
and the reference server checking tokens by introspection. All on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
from starlette.responses import RedirectResponse
from starlette.routing import Route

from talkie_tui.auth.errors import CallbackRejected, SignInError
from talkie_tui.auth.signin import SignIn
from talkie_tui.auth.store import FileStore, MemoryStore, StoredGrant
from talkie_tui.auth.token_requests import TokenSet, refresh_grant
from talkie_tui.auth.tokens import OAuthTokens
from talkie_tui.config import DEFAULT_CLIENT_ID, config_dir
from talkie_tui.core.errors import ServerError, UnauthorizedError
from talkie_tui.protocol.talkie.client import TalkieClient
from tests.conftest import OAUTH_ACCESS_TTL
from tests.oauth_provider import (
    OidcProvider,
    browse_to_callback,
    callback_params,
    introspect,
    oauth_config,
)
from tests.protocol.conftest import Serve, serve
from tests.stub_server import ANOTHER_LOOPBACK, ENDPOINTS, manifest_document, talkie_app

__all__ = ["serve"]

pytestmark = [pytest.mark.oauth, pytest.mark.slow]

ECHO = "talkie-test:echo signed in and heard"
TALKIE = [sys.executable, "-m", "talkie_tui.cli"]


@pytest.fixture
def talkie_server(devserver: Callable[..., str], oidc_provider: OidcProvider) -> str:
    """A reference server in test mode that accepts only the AS's access tokens."""
    return devserver(**oauth_config(oidc_provider, test_mode=True))


def _talkie(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the `talkie` command in its own process (TALKIE_HOME comes from the test)."""
    return subprocess.run(
        [*TALKIE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
        check=False,
    )


def _login_process(server: str) -> subprocess.Popen[str]:
    """`talkie login SERVER --no-browser --store file`, waiting for its URL and pasted answer."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "talkie_tui.cli",
            "login",
            server,
            "--no-browser",
            "--store",
            "file",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )


def _read_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    assert line.startswith("http://127.0.0.1:"), line + (
        process.stderr.read() if process.stderr else ""
    )
    return line


def _cli_sign_in(server: str, *, paste: bool) -> subprocess.CompletedProcess[str]:
    """Sign in with the real `talkie login`: the answer reaches its loopback port, or is pasted."""
    process = _login_process(server)
    callback = browse_to_callback(_read_url(process))
    if paste:
        out, err = process.communicate(callback + "\n", timeout=60)
    else:
        # What the browser does at the end: it follows the redirect to talkie's receiver.
        page = httpx.get(callback, timeout=10)
        assert page.status_code == 200 and "Signed in to Talkie" in page.text
        assert page.headers["cache-control"] == "no-store"
        out, err = process.communicate("", timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _stored() -> tuple[str, StoredGrant]:
    """The one sign-in `talkie login --store file` kept: (serverId, grant)."""
    document = json.loads((config_dir() / "tokens.json").read_text())
    [(server_id, _)] = document["grants"].items()
    grant = FileStore().load(server_id)
    assert grant is not None
    return server_id, grant


def _stored_refresh_token() -> str:
    return _stored()[1].refresh_token


def test_talkie_login_through_the_loopback_receiver_then_ask(talkie_server: str) -> None:
    signed_in = _cli_sign_in(talkie_server, paste=False)
    assert signed_in.returncode == 0, signed_in.stderr
    assert "Signed in to Talkie Demo CRM as alice" in signed_in.stderr
    assert "tokens.json" in signed_in.stderr

    answer = _talkie("ask", talkie_server, ECHO)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout == "signed in and heard\n"

    listed = _talkie("servers")
    assert "signed in (file)" in listed.stdout

    refresh_token = _stored_refresh_token()
    assert refresh_token not in signed_in.stdout + signed_in.stderr + answer.stderr


def test_sign_in_over_ssh_by_pasting_the_final_address(talkie_server: str) -> None:
    """The browser is elsewhere: its redirect to 127.0.0.1 fails, the address is pasted."""
    signed_in = _cli_sign_in(talkie_server, paste=True)
    assert signed_in.returncode == 0, signed_in.stderr
    answer = _talkie("ask", talkie_server, ECHO)
    assert answer.returncode == 0, answer.stderr


def test_tokens_expire_refresh_and_rotate_and_two_clients_at_once_stay_signed_in(
    talkie_server: str, oidc_provider: OidcProvider
) -> None:
    assert _cli_sign_in(talkie_server, paste=True).returncode == 0
    first = _stored_refresh_token()

    # Every `talkie ask` starts with no access token: each one refreshes (and rotates).
    assert _talkie("ask", talkie_server, ECHO).returncode == 0
    second = _stored_refresh_token()
    assert second != first
    assert introspect(oidc_provider, second, "refresh_token")["active"] is True

    # Two processes refreshing at the same moment: without the lock one would replay the
    # token the other just rotated, and the server would revoke the whole grant.
    together = [
        subprocess.Popen(
            [*TALKIE, "ask", talkie_server, ECHO],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        for _ in range(2)
    ]
    results = [process.communicate(timeout=60) for process in together]
    assert [p.returncode for p in together] == [0, 0], results
    assert _talkie("ask", talkie_server, ECHO).returncode == 0  # and the grant is still alive


async def test_two_clients_refreshing_at_the_same_moment_both_stay_signed_in(
    talkie_server: str, oidc_provider: OidcProvider
) -> None:
    """Two windows of talkie share one stored grant; their refreshes must take turns."""
    tokens = await _library_sign_in(talkie_server, FileStore())
    windows = [
        OAuthTokens(
            server_id=tokens.server_id,
            issuer=tokens.issuer,
            client_id=tokens.client_id,
            store=FileStore(),
        )
        for _ in range(3)
    ]
    for _ in range(3):
        fresh = await asyncio.gather(*(window.refresh("") for window in windows))
        assert all(fresh), "a window was signed out: a rotated refresh token was replayed"
    grant = FileStore().load(tokens.server_id)
    assert grant is not None
    assert introspect(oidc_provider, grant.refresh_token, "refresh_token")["active"] is True
    await asyncio.gather(tokens.aclose(), *(window.aclose() for window in windows))


async def _library_sign_in(
    server_url: str, store: object, answer: Callable[[str], str] | None = None
) -> OAuthTokens:
    """Sign in with `SignIn` in this process; `answer` may alter the callback URL first."""
    client = await TalkieClient.connect(server_url)
    async with SignIn(client.server, client_id=DEFAULT_CLIENT_ID, store=store) as sign_in:
        url = await sign_in.start()
        callback = await asyncio.to_thread(browse_to_callback, url)
        if answer is not None:
            callback = answer(callback)
        async with httpx.AsyncClient() as browser:
            await browser.get(callback, timeout=10)
        tokens = await sign_in.wait(timeout=30)
    await client.aclose()
    return tokens


async def test_an_expired_access_token_is_refreshed_once_on_401(
    talkie_server: str, oidc_provider: OidcProvider
) -> None:
    store = MemoryStore()
    tokens = await _library_sign_in(talkie_server, store)
    expired = await tokens.token()
    assert expired
    await asyncio.sleep(OAUTH_ACCESS_TTL + 1)
    assert introspect(oidc_provider, expired)["active"] is False

    # A token source that does not know the expiry: the server's 401 must trigger the refresh.
    blind = OAuthTokens(
        server_id=tokens.server_id,
        issuer=tokens.issuer,
        client_id=tokens.client_id,
        store=store,
        tokens=TokenSet(expired),
    )
    client = await TalkieClient.connect(talkie_server, tokens=blind)
    status = await client.status()
    assert status.user is not None and status.user.name == "alice"
    assert await blind.token() != expired
    await client.aclose()
    await tokens.aclose()


async def test_a_replayed_refresh_token_is_refused_and_the_grant_ends(
    talkie_server: str, oidc_provider: OidcProvider
) -> None:
    store = MemoryStore()
    tokens = await _library_sign_in(talkie_server, store)
    client = await TalkieClient.connect(talkie_server, tokens=tokens)
    old = store.load(client.server.server_id)
    assert old is not None
    assert await tokens.refresh(await tokens.token() or "") is not None  # rotates
    async with httpx.AsyncClient() as http:
        with pytest.raises(SignInError) as replayed:
            await refresh_grant(
                http,
                oidc_provider.endpoint("token"),
                client_id=DEFAULT_CLIENT_ID,
                refresh_token=old.refresh_token,
            )
    assert replayed.value.code == "invalid_grant"
    # Reuse detection revoked the whole family: talkie must now ask to sign in again.
    assert await tokens.refresh(await tokens.token() or "") is None
    assert store.load(client.server.server_id) is None
    with pytest.raises(UnauthorizedError):
        await client.status()
    await client.aclose()


def test_sign_out_revokes_then_the_server_refuses_and_ask_exits_3(
    talkie_server: str, oidc_provider: OidcProvider
) -> None:
    assert _cli_sign_in(talkie_server, paste=True).returncode == 0
    refresh_token = _stored_refresh_token()
    access = httpx.post(
        oidc_provider.endpoint("token"),
        data={
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": DEFAULT_CLIENT_ID,
        },
    ).json()
    server_id, grant = _stored()
    FileStore().save(server_id, StoredGrant(access["refresh_token"], grant.issuer, grant.client_id))
    status_url = talkie_server + ENDPOINTS["status"]
    bearer = {"Authorization": f"Bearer {access['access_token']}"}
    assert httpx.get(status_url, headers=bearer).status_code == 200

    out = _talkie("logout", talkie_server)
    assert out.returncode == 0, out.stderr
    assert "The server revoked the sign-in" in out.stderr

    assert httpx.get(status_url, headers=bearer).status_code == 401
    assert introspect(oidc_provider, access["refresh_token"], "refresh_token")["active"] is False
    answer = _talkie("ask", talkie_server, ECHO)
    assert answer.returncode == 3
    assert "talkie login" in answer.stderr
    assert "not signed in" in _talkie("servers").stdout


def test_access_denied_shows_the_servers_words(talkie_server: str) -> None:
    process = _login_process(talkie_server)
    callback = browse_to_callback(_read_url(process), deny=True)
    assert "error=access_denied" in callback
    _, err = process.communicate(callback + "\n", timeout=60)
    assert process.returncode == 3, err
    assert "access_denied" in err and "aborted" in err.lower()
    assert not Path(os.environ["TALKIE_HOME"], "tokens.json").exists()


def _with_param(url: str, name: str, value: str | None) -> str:
    parts = urlsplit(url)
    params = callback_params(url)
    if value is None:
        params.pop(name, None)
    else:
        params[name] = value
    return parts._replace(query=urlencode(params)).geturl()


async def test_a_wrong_state_is_refused_and_the_real_answer_still_signs_in(
    talkie_server: str,
) -> None:
    client = await TalkieClient.connect(talkie_server)
    async with SignIn(client.server, client_id=DEFAULT_CLIENT_ID, store=MemoryStore()) as sign_in:
        url = await sign_in.start()
        callback = await asyncio.to_thread(browse_to_callback, url)
        async with httpx.AsyncClient() as browser:
            forged = await browser.get(_with_param(callback, "state", "forged"), timeout=10)
            assert forged.status_code == 400
            assert "does not belong to the sign-in in progress" in forged.text
            real = await browser.get(callback, timeout=10)
            assert real.status_code == 200
        tokens = await sign_in.wait(timeout=30)
    assert await tokens.token()
    await tokens.aclose()
    await client.aclose()


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda url: _with_param(url, "iss", "http://127.0.0.1:1"), "issuer_mismatch"),
        (lambda url: _with_param(url, "iss", None), "issuer_missing"),
    ],
)
async def test_a_wrong_or_missing_iss_ends_the_sign_in(
    talkie_server: str, change: Callable[[str], str], code: str
) -> None:
    store = MemoryStore()
    with pytest.raises(CallbackRejected) as refused:
        await _library_sign_in(talkie_server, store, change)
    assert refused.value.code == code
    assert store.load("127.0.0.1") is None and not _session_has_grants()


def _session_has_grants() -> bool:
    from talkie_tui.auth import store

    return bool(store._SESSION_GRANTS)


async def test_a_307_to_another_origin_never_carries_the_oauth_bearer(
    serve: Serve, oidc_provider: OidcProvider, talkie_server: str
) -> None:
    """§2.1: the bearer goes to the issuer origin only, not after a redirect elsewhere."""
    store = MemoryStore()
    tokens = await _library_sign_in(talkie_server, store)
    access = await tokens.token()
    elsewhere = serve(talkie_app(), host=ANOTHER_LOOPBACK)
    moved = Route(
        ENDPOINTS["status"], lambda request: RedirectResponse(elsewhere.url("/steal"), 307)
    )
    redirecting = serve(
        talkie_app(
            [moved],
            manifest=lambda origin: manifest_document(
                origin, auth={"oauth": {"issuer": oidc_provider.issuer}}
            ),
        )
    )
    client = await TalkieClient.connect(redirecting.origin, tokens=tokens)
    with pytest.raises(ServerError, match="redirected"):
        await client.status()
    sent = [r.headers.get("authorization") for r in redirecting.requests if "status" in r.path]
    assert sent and sent[0] == f"Bearer {access}"  # it did go to the issuer origin…
    assert elsewhere.requests == []  # …and nothing, bearer or not, reached the other one
    await client.aclose()


def test_the_reference_server_refuses_an_unknown_token(talkie_server: str) -> None:
    answer = _talkie("ask", talkie_server, ECHO, "--token", "made-up")
    assert answer.returncode == 3
    assert re.search(r"sign-in needed", answer.stderr)
