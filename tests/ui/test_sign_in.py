"""Signing in from the TUI, over real HTTP: a stub authorization server, and the real one.

The stub tests run the real `SignIn` (loopback receiver, PKCE, state and issuer checks) against
a small authorization server on 127.0.0.1 that redirects at once. The `oauth`-marked tests sign
in for real: oidc-provider, its login form driven over HTTP, and the reference server checking
the tokens by introspection. No browser is ever opened: `talkie_tui.browser` is patched.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from keyring.backends import fail
from textual.pilot import Pilot
from textual.widgets import Button, Input

from talkie_tui import browser
from talkie_tui.auth.store import MemoryStore, StoredGrant, open_store
from talkie_tui.auth.tokens import OAuthTokens
from talkie_tui.config import DEFAULT_CLIENT_ID, KnownServers, Settings, config_dir
from talkie_tui.core.tokens import StaticToken
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.connect import ConnectScreen
from talkie_tui.ui.screens.sign_in import SignInScreen
from talkie_tui.ui.screens.store_choice import StoreChoiceScreen
from talkie_tui.ui.widgets.header import TalkieHeader
from tests.auth.memory_keyring import InstallKeyring, MemoryKeyring
from tests.oauth_provider import OidcProvider, browse_to_callback, introspect
from tests.protocol.conftest import Serve
from tests.stub_server import talkie_app
from tests.ui.apps.connect_app import ConnectApp
from tests.ui.stub_oauth import USER, Ledger, authorization_server, browse, talkie_server

SERVER_ID = "stub.test"  # manifest_document's serverId


@pytest.fixture(autouse=True)
def no_browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """No browser is ever opened; the URLs talkie tried to open are kept here."""
    opened: list[str] = []

    def open_url(url: str) -> bool:
        opened.append(url)
        return True

    for name in ("BROWSER", "SSH_CONNECTION", "SSH_TTY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(browser, "graphical_browser_available", lambda: False)
    monkeypatch.setattr(browser, "open_url", open_url)
    return opened


@pytest.fixture
def ledger(serve: Serve) -> Ledger:
    """The stub authorization server, running; its ledger knows its issuer."""
    ledger = Ledger()
    ledger.issuer = serve(authorization_server(ledger)).origin
    return ledger


@pytest.fixture
def server(serve: Serve, ledger: Ledger) -> str:
    """A talkie/1 server that offers OAuth through the stub authorization server."""
    return serve(talkie_server(ledger)).origin


@pytest.fixture
def known() -> KnownServers:
    """The server list under this test's TALKIE_HOME."""
    return KnownServers.load()


async def until(pilot: Pilot[Any], condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the app run until `condition()` is true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await pilot.pause(0.02)


async def sign_in_screen(pilot: Pilot[Any]) -> SignInScreen:
    """Wait for the sign-in screen with its address shown."""
    app = pilot.app
    await until(
        pilot,
        lambda: isinstance(app.screen, SignInScreen) and app.screen.is_mounted and app.screen.url,
    )
    screen = app.screen
    assert isinstance(screen, SignInScreen)
    return screen


async def paste(pilot: Pilot[Any], screen: SignInScreen, text: str) -> None:
    """Paste `text` into the paste box and press Enter."""
    box = screen.query_one("#sign-in-paste", Input)
    box.focus()
    box.value = text
    await pilot.press("enter")
    await pilot.pause()


async def deliver(callback_url: str) -> httpx.Response:
    """Play the browser coming back: GET the callback from the loopback receiver."""
    async with httpx.AsyncClient(trust_env=False) as http:
        return await http.get(callback_url)


def port_is_open(url: str) -> bool:
    """True when something listens at the host and port of `url`."""
    parts = urlsplit(url)
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((parts.hostname or "", parts.port or 80)) == 0


def with_state(callback_url: str, state: str) -> str:
    """`callback_url` with another state parameter (an old tab, or a forgery)."""
    parts = urlsplit(callback_url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()} | {"state": state}
    return urlunsplit(parts._replace(query=urlencode(query)))


# --- the screen ----------------------------------------------------------------------------


async def test_screen_says_where_and_shows_the_address(
    server: str, ledger: Ledger, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        title = str(screen.query_one("#sign-in-title").content)  # type: ignore[attr-defined]
        issuer = str(screen.query_one("#sign-in-issuer").content)  # type: ignore[attr-defined]
        assert title == "Sign in to Stub CRM"
        assert issuer == f"through its sign-in service at {ledger.issuer}"
        assert screen.url.startswith(f"{ledger.issuer}/authorize?")
        assert "prompt=consent" in screen.url and "code_challenge_method=S256" in screen.url
        shown = str(screen.query_one("#sign-in-url").content)  # type: ignore[attr-defined]
        assert shown == screen.url
        assert "Waiting for you to sign in… 0:0" in screen.status_text
        # No graphical browser here: the button is off and the screen says why.
        assert screen.query_one("#sign-in-open", Button).disabled
        assert "cannot open a browser here: no graphical display was found" in (screen.browser_note)
        assert screen.query_one("#sign-in-paste", Input).has_focus
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.clipboard == screen.url
        assert "Copied" in str(screen.query_one("#sign-in-copied").content)  # type: ignore[attr-defined]
        assert app.connect_screen.status_text == "Signing in to Stub CRM…"


async def test_over_ssh_the_screen_says_so(
    server: str, known: KnownServers, memory_keyring: MemoryKeyring, monkeypatch: Any
) -> None:
    monkeypatch.setenv("SSH_CONNECTION", "10.0.0.2 50000 10.0.0.1 22")
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        assert "this is an SSH session, so the browser would open on the wrong machine" in (
            screen.browser_note
        )


async def test_a_graphical_browser_is_opened_once(
    server: str,
    known: KnownServers,
    memory_keyring: MemoryKeyring,
    monkeypatch: Any,
    no_browser: list[str],
) -> None:
    monkeypatch.setattr(browser, "graphical_browser_available", lambda: True)
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        await until(pilot, lambda: "should now show the sign-in page" in screen.browser_note)
        assert no_browser == [screen.url]
        assert not screen.query_one("#sign-in-open", Button).disabled
        await pilot.press("ctrl+o")  # asked again by the person: opened again
        await until(pilot, lambda: len(no_browser) == 2)


# --- finishing the sign-in -----------------------------------------------------------------


async def test_the_browser_reaching_the_loopback_receiver_signs_in(
    server: str, ledger: Ledger, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        callback = await browse(screen.url)
        assert callback.startswith("http://127.0.0.1:")
        page = await deliver(callback)
        assert page.status_code == 200 and "You are signed in" in page.text
        await until(pilot, lambda: app.connected)
        client = app.connected[0]
        assert isinstance(client.tokens, OAuthTokens)
        assert (await client.status()).user.name == USER["name"]
        assert isinstance(app.screen, ConnectScreen)
        assert not port_is_open(callback)  # the receiver closed once it had the answer
    # Kept in the keyring; the server list says so.
    assert open_store("keyring").load(SERVER_ID) is not None
    assert KnownServers.load().get(SERVER_ID).signed_in  # type: ignore[union-attr]


async def test_a_pasted_wrong_state_is_refused_inline_and_the_text_kept(
    server: str, ledger: Ledger, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        callback = await browse(screen.url)
        forged = with_state(callback, "not-the-state-talkie-sent")
        await paste(pilot, screen, forged)
        assert "does not belong to the sign-in in progress" in screen.paste_error
        assert screen.query_one("#sign-in-paste", Input).value == forged  # kept, to be fixed
        assert not screen.failed and "Waiting for you to sign in" in screen.status_text
        # The right address then finishes the same sign-in.
        await paste(pilot, screen, callback)
        await until(pilot, lambda: app.connected)
        assert isinstance(app.connected[0].tokens, OAuthTokens)


async def test_escape_cancels_and_closes_the_loopback_port(
    server: str, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        callback = await browse(screen.url)
        assert port_is_open(callback)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, ConnectScreen))
        await until(pilot, lambda: not app.connect_screen.busy)
        assert app.connect_screen.status_text == "Sign-in cancelled."
        assert not port_is_open(callback)
        assert app.connected == []


async def test_a_refusal_shows_the_servers_words_and_retry_starts_anew(
    server: str, ledger: Ledger, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    ledger.deny = "Alice may not use the CRM assistant"
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        first_url = screen.url
        await deliver(await browse(first_url))
        await until(pilot, lambda: screen.failed)
        assert "Alice may not use the CRM assistant (access_denied)" in screen.status_text
        assert screen.status_text.startswith("✗ ")
        retry = screen.query_one("#sign-in-retry", Button)
        await until(pilot, lambda: retry.has_focus)
        ledger.deny = ""
        await pilot.press("enter")  # Retry: a new flow, a new state
        await until(pilot, lambda: not screen.failed and screen.url != first_url)
        assert not retry.display
        await deliver(await browse(screen.url))
        await until(pilot, lambda: app.connected)


async def test_an_answer_from_another_issuer_ends_the_sign_in(
    server: str, ledger: Ledger, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        callback = await browse(screen.url)
        parts = urlsplit(callback)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        mixed_up = urlunsplit(
            parts._replace(query=urlencode(query | {"iss": "https://evil.example"}))
        )
        await paste(pilot, screen, mixed_up)
        await until(pilot, lambda: screen.failed)
        assert "names the issuer 'https://evil.example'" in screen.status_text
        assert screen.query_one("#sign-in-retry", Button).display
        assert not port_is_open(callback)  # the flow is over: its receiver is closed
        assert app.connected == []


async def test_an_unreachable_sign_in_server_is_an_error_with_retry(
    serve: Serve,
    known: KnownServers,
    memory_keyring: MemoryKeyring,
) -> None:
    ledger = Ledger(issuer="http://127.0.0.1:9")  # the discard port: nobody answers
    app = ConnectApp(serve(talkie_server(ledger)).origin, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SignInScreen) and app.screen.is_mounted)
        screen = app.screen
        assert isinstance(screen, SignInScreen)
        await until(pilot, lambda: screen.failed)
        assert "Could not connect to http://127.0.0.1:9" in screen.status_text
        assert "Trying again may help" in screen.status_text
        assert screen.query_one("#sign-in-retry", Button).display


# --- where the sign-in is kept ---------------------------------------------------------------


async def test_without_a_keyring_the_person_chooses_where(
    server: str, ledger: Ledger, known: KnownServers, install_keyring: InstallKeyring
) -> None:
    install_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    settings = Settings()
    app = ConnectApp(server, known=known, settings=settings)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(
            pilot, lambda: isinstance(app.screen, StoreChoiceScreen) and app.screen.is_mounted
        )
        dialog = app.screen
        assert isinstance(dialog, StoreChoiceScreen)
        assert dialog.choices == [
            f"Keep it in a private file (0600) in {config_dir()}",
            "This session only (sign in again next time) · recommended",
            "Cancel",
        ]
        await until(pilot, lambda: dialog.focused is not None)
        assert dialog.focused is not None and dialog.focused.id == "store-choice-session"
        body = str(dialog.query_one("#store-choice-body").content)  # type: ignore[attr-defined]
        assert "none is usable here" in body and "Stub CRM" in body
        await pilot.press("enter")  # Enter takes the recommendation: this session only
        screen = await sign_in_screen(pilot)
        await deliver(await browse(screen.url))
        await until(pilot, lambda: app.connected)
        assert settings.token_storage == "session"  # for this run only; config.toml untouched
        assert MemoryStore().load(SERVER_ID) is not None
        # Memory only: the list on disk does not claim a lasting sign-in...
        assert not KnownServers.load().get(SERVER_ID).signed_in  # type: ignore[union-attr]
        # ...while this session's list does.
        app.connect_screen.refresh_known()
        await pilot.pause()
        row = app.connect_screen.known_list.get_option(SERVER_ID).prompt
        assert row.parts()[1] == "signed in"  # type: ignore[union-attr]
    MemoryStore().discard(SERVER_ID)


async def test_without_a_keyring_cancel_keeps_nothing(
    server: str, ledger: Ledger, known: KnownServers, install_keyring: InstallKeyring
) -> None:
    install_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(
            pilot, lambda: isinstance(app.screen, StoreChoiceScreen) and app.screen.is_mounted
        )
        await until(pilot, lambda: app.screen.focused is not None)
        await pilot.press("escape")  # only Esc or the Cancel button cancels
        await until(pilot, lambda: not app.connect_screen.busy)
        assert app.connect_screen.status_text == "Sign-in cancelled."
        assert ledger.authorization_requests == []
        assert app.connected == []


async def test_a_stored_sign_in_is_used_without_asking(
    server: str, ledger: Ledger, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    ledger.live_refresh.add("rt-stored")
    grant = StoredGrant("rt-stored", ledger.issuer, DEFAULT_CLIENT_ID, "talkie offline_access")
    open_store("keyring").save(SERVER_ID, grant)
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: app.connected)
        assert not any(isinstance(s, SignInScreen) for s in app.screen_stack)
        assert ledger.refresh_requests == 1 and ledger.authorization_requests == []
        assert (await app.connected[0].status()).user.name == USER["name"]
    assert KnownServers.load().get(SERVER_ID).signed_in  # type: ignore[union-attr]


async def test_a_stored_sign_in_the_server_no_longer_accepts_asks_again(
    server: str, ledger: Ledger, known: KnownServers, memory_keyring: MemoryKeyring
) -> None:
    grant = StoredGrant("rt-revoked", ledger.issuer, DEFAULT_CLIENT_ID, "talkie offline_access")
    open_store("keyring").save(SERVER_ID, grant)
    app = ConnectApp(server, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        await sign_in_screen(pilot)
    assert open_store("keyring").load(SERVER_ID) is None  # the dead grant is forgotten


# --- development tokens (§2.2) ---------------------------------------------------------------


async def test_a_token_only_server_is_refused_without_the_switch(
    serve: Serve,
    known: KnownServers,
) -> None:
    app = ConnectApp(serve(talkie_app()).origin, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: app.connect_screen.status_text.startswith("✗"))
        status = app.connect_screen.status_text
        assert "Stub server only offers development tokens" in status
        assert "pass --token" in status and "dev_tokens = true" in status
        assert app.connected == []
        assert not any(isinstance(s, SignInScreen) for s in app.screen_stack)


async def test_with_the_switch_a_token_can_be_pasted(
    serve: Serve,
    known: KnownServers,
) -> None:
    app = ConnectApp(serve(talkie_app()).origin, known=known, settings=Settings(dev_tokens=True))
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SignInScreen) and app.screen.is_mounted)
        screen = app.screen
        assert isinstance(screen, SignInScreen)
        assert not screen.uses_oauth
        label = str(screen.query_one("#sign-in-token-label").content)  # type: ignore[attr-defined]
        assert label == "Development token (any token):"
        box = screen.query_one("#sign-in-token", Input)
        await until(pilot, lambda: box.has_focus)
        assert box.password
        await pilot.press(*"secret", "enter")
        await until(pilot, lambda: app.connected)
        tokens = app.connected[0].tokens
        assert isinstance(tokens, StaticToken) and await tokens.token() == "secret"


async def test_oauth_server_with_the_switch_offers_both(
    serve: Serve,
    ledger: Ledger,
    known: KnownServers,
    memory_keyring: MemoryKeyring,
) -> None:
    origin = serve(talkie_server(ledger, token_offer=True)).origin
    app = ConnectApp(origin, known=known, settings=Settings(dev_tokens=True))
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        assert screen.uses_oauth and screen.query("#sign-in-token")
    # Without the switch there is no token box at all.
    app = ConnectApp(origin, known=known)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = await sign_in_screen(pilot)
        assert not screen.query("#sign-in-token")


# --- the whole app: user, 401 mid-session, sign-out -----------------------------------------


def stored_app(ledger: Ledger, server: str, tmp_path: Path) -> TalkieApp:
    """The app on `server` with a stored sign-in (refresh token rt-stored) in the keyring."""
    ledger.live_refresh.add("rt-stored")
    grant = StoredGrant("rt-stored", ledger.issuer, DEFAULT_CLIENT_ID, "talkie offline_access")
    open_store("keyring").save(SERVER_ID, grant)
    return TalkieApp(server, settings=Settings(downloads_dir=tmp_path), known=KnownServers.load())


async def chat_ready(pilot: Pilot[Any]) -> ChatScreen:
    """Wait for the chat screen with the signed-in user in its header."""
    app = pilot.app

    def ready() -> bool:
        screen = app.screen
        return (
            isinstance(screen, ChatScreen)
            and bool(screen.query(TalkieHeader))
            and bool(screen.header.user_label)
        )

    await until(pilot, ready)
    assert isinstance(app.screen, ChatScreen)
    return app.screen


async def test_the_header_shows_the_signed_in_user(
    server: str, ledger: Ledger, memory_keyring: MemoryKeyring, tmp_path: Path
) -> None:
    app = TalkieApp(server, settings=Settings(downloads_dir=tmp_path), known=KnownServers.load())
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await sign_in_screen(pilot)
        await deliver(await browse(screen.url))
        chat = await chat_ready(pilot)
        assert chat.header.user_label == "Alice Stub"


async def test_a_401_mid_session_offers_sign_in_and_keeps_the_draft(
    server: str, ledger: Ledger, memory_keyring: MemoryKeyring, tmp_path: Path
) -> None:
    app = stored_app(ledger, server, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        chat = await chat_ready(pilot)
        client = chat.client
        old_tokens = client.tokens
        chat.composer.insert("a draft I am still writing")
        ledger.end_every_sign_in()  # the refresh token dies too: refreshing cannot help
        chat.refresh_threads()
        screen = await sign_in_screen(pilot)
        reason = str(screen.query_one("#sign-in-reason").content)  # type: ignore[attr-defined]
        assert "Stub CRM did not accept your sign-in" in reason
        assert "The sign-in has expired or was revoked" in reason
        await paste(pilot, screen, await browse(screen.url))
        await until(pilot, lambda: app.screen is chat)
        assert client.tokens is not old_tokens and isinstance(client.tokens, OAuthTokens)
        assert chat.composer.text == "a draft I am still writing"
        await until(pilot, lambda: chat.header.state == "connected")
        assert (await client.status()).user.name == USER["name"]


async def test_declining_the_new_sign_in_does_not_ask_again_by_itself(
    server: str, ledger: Ledger, memory_keyring: MemoryKeyring, tmp_path: Path
) -> None:
    app = stored_app(ledger, server, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        chat = await chat_ready(pilot)
        ledger.end_every_sign_in()
        chat.refresh_threads()
        await sign_in_screen(pilot)
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is chat)
        chat.refresh_threads()
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)
        assert app.screen is chat  # not pushed again on its own...
        await app.run_action("sign_in")  # ...but the palette's "Sign in" does
        await sign_in_screen(pilot)


async def test_sign_out_revokes_forgets_and_returns_to_the_list(
    server: str, ledger: Ledger, memory_keyring: MemoryKeyring, tmp_path: Path
) -> None:
    app = stored_app(ledger, server, tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await chat_ready(pilot)
        assert app.check_action("sign_out", ()) is True
        await pilot.press("ctrl+p")  # the palette, as a person would
        await pilot.pause()
        await pilot.press(*"sign out")
        await app.screen.workers.wait_for_complete()
        await pilot.pause(0.1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConnectScreen))
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        await until(pilot, lambda: "Signed out of Stub CRM" in screen.status_text)
        assert "The server revoked the sign-in." in screen.status_text
        assert "removed from the system keyring" in screen.status_text
        # The rotated refresh token first (it ends the grant), then the access token.
        assert ledger.revoked == ["rt-1", "at-1"]
        assert memory_keyring.entries == {}
        assert not KnownServers.load().get(SERVER_ID).signed_in  # type: ignore[union-attr]
        row = screen.known_list.get_option(SERVER_ID).prompt
        assert row.parts()[1] == "not signed in"  # type: ignore[union-attr]
        assert app.client is None
        assert app.check_action("sign_out", ()) is False


# --- the real authorization server -----------------------------------------------------------


@pytest.mark.oauth
@pytest.mark.parametrize("answer", ["loopback", "paste"])
async def test_real_sign_in_opens_the_chat_as_the_user(
    answer: str,
    oidc_provider: OidcProvider,
    devserver: Callable[..., str],
    memory_keyring: MemoryKeyring,
    tmp_path: Path,
) -> None:
    url = devserver(
        test_mode=True,
        demo_agent=True,
        oauth_issuer=oidc_provider.issuer,
        oauth_client_id=oidc_provider.resource_client_id,
        oauth_client_secret=oidc_provider.resource_client_secret,
        oauth_audience=oidc_provider.audience,
    )
    settings = Settings(downloads_dir=tmp_path, oauth_client_id=oidc_provider.client_id)
    app = TalkieApp(url, settings=settings, known=KnownServers.load())
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await sign_in_screen(pilot)
        assert screen.issuer == oidc_provider.issuer
        callback = await asyncio.to_thread(browse_to_callback, screen.url, user="alice")
        if answer == "loopback":
            page = await deliver(callback)
            assert page.status_code == 200
        else:
            await paste(pilot, screen, callback)
        chat = await chat_ready(pilot)
        assert chat.header.user_label == "alice"
        assert isinstance(chat.client.tokens, OAuthTokens)
        assert open_store("keyring").load(chat.client.server.server_id) is not None


@pytest.mark.oauth
async def test_real_sign_out_revokes_at_the_authorization_server(
    oidc_provider: OidcProvider,
    devserver: Callable[..., str],
    memory_keyring: MemoryKeyring,
    tmp_path: Path,
) -> None:
    url = devserver(
        test_mode=True,
        demo_agent=True,
        oauth_issuer=oidc_provider.issuer,
        oauth_client_id=oidc_provider.resource_client_id,
        oauth_client_secret=oidc_provider.resource_client_secret,
        oauth_audience=oidc_provider.audience,
    )
    settings = Settings(downloads_dir=tmp_path, oauth_client_id=oidc_provider.client_id)
    app = TalkieApp(url, settings=settings, known=KnownServers.load())
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await sign_in_screen(pilot)
        await paste(pilot, screen, await asyncio.to_thread(browse_to_callback, screen.url))
        chat = await chat_ready(pilot)
        server_id = chat.client.server.server_id
        grant = open_store("keyring").load(server_id)
        assert grant is not None
        await app.run_action("sign_out")
        await until(pilot, lambda: isinstance(app.screen, ConnectScreen))
        connect = app.screen
        assert isinstance(connect, ConnectScreen)
        await until(pilot, lambda: "Signed out" in connect.status_text)
        assert "The server revoked the sign-in." in connect.status_text
    assert introspect(oidc_provider, grant.refresh_token, "refresh_token")["active"] is False
    assert open_store("keyring").load(server_id) is None
