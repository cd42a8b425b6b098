"""`talkie connect HUB` in the real app against the reference Cuckoo hub: the e-mail sign-in
(the code read from the hub's code sink), the session kept and used again without asking, a
401 mid-session signed in again over the chat, and sign-out ending the session on the hub."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from talkie_tui.auth.bearer_grants import find_bearer
from talkie_tui.auth.file_store import FileStore
from talkie_tui.backends.cuckoo.backend import CuckooBackend
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.connect import ConnectScreen
from talkie_tui.ui.screens.email_sign_in import EmailSignInScreen
from talkie_tui.ui.screens.store_choice import StoreChoiceScreen
from tests.ui.flows import chat_composed, screen_up
from tests.ui.test_gateway_sign_in import wait_for

pytestmark = pytest.mark.slow

EMAIL = "jana@example.com"


@pytest.fixture
def hub(cuckoo_hub: Callable[..., str]) -> tuple[str, dict[str, str]]:
    """A dev-mode hub whose sign-in codes land in a dict (address → latest code)."""
    codes: dict[str, str] = {}
    url = cuckoo_hub(code_sink=codes.__setitem__, code_rate=(1000.0, 1000))
    return url, codes


def app_for(address: str, tmp_path: Path, storage: str = "file", **options: Any) -> TalkieApp:
    settings = Settings(token_storage=storage)
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(address, settings=settings, known=known, **options)


async def sign_in_on_screen(pilot: Pilot[None], codes: dict[str, str], email: str = EMAIL) -> None:
    """Type the address and then the code the hub sent into the e-mail sign-in screen."""
    app = pilot.app
    await wait_for(pilot, lambda: screen_up(app, EmailSignInScreen))
    screen = app.screen
    assert isinstance(screen, EmailSignInScreen)
    screen.query_one("#email-address", Input).value = email
    screen.query_one("#email-address", Input).focus()
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.step == "code" and email in codes)
    await pilot.press(*codes[email], "enter")


def kept_token(url: str) -> str | None:
    """The session token kept for the hub (in any store)."""
    found = find_bearer(url, url + "/", FileStore())
    return found[0] if found is not None else None


def on_disk(url: str) -> bool:
    """True when the private file holds a sign-in for the hub."""
    return FileStore().load(url) is not None


async def me_status(url: str, token: str) -> int:
    async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
        answer = await http.get(f"{url}/v1/client/me", headers={"Authorization": f"Bearer {token}"})
    return answer.status_code


async def test_a_hub_asks_for_the_email_keeps_the_session_and_uses_it_again(
    hub: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, codes = hub
    address = url.removeprefix("http://")
    app = app_for(address, tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_for(pilot, lambda: screen_up(app, EmailSignInScreen))
        screen = app.screen
        assert isinstance(screen, EmailSignInScreen)
        text = screen.query_one("#email-reason").render().plain
        assert "wants you signed in" in text  # the hub's words, through the backend
        assert screen.kept_in  # where the session will be kept is said before signing in
        await sign_in_on_screen(pilot, codes)
        await wait_for(pilot, lambda: chat_composed(app))
        assert isinstance(app.backend, CuckooBackend)
        assert app.backend.user is not None and app.backend.user.name == "jana"

    token = kept_token(url)
    assert token is not None and token.startswith("ses_tok_")
    entry = KnownServers.load(tmp_path / "servers.json").find(address)
    assert entry is not None and entry.protocol == "cuckoo" and entry.signed_in

    codes.clear()
    again = app_for(address, tmp_path)
    async with again.run_test(size=(110, 36)) as pilot:
        await wait_for(pilot, lambda: chat_composed(again))  # no screen asked for anything
        assert not codes


async def test_a_known_hub_is_reached_as_a_hub_and_cancel_says_so(
    hub: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, _codes = hub
    address = url.removeprefix("http://")
    KnownServers.load(tmp_path / "servers.json").remember_server(
        url, address, name="Cuckoo hub", origin=url, protocol="cuckoo"
    )
    app = app_for(address, tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EmailSignInScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConnectScreen))
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        await wait_for(pilot, lambda: "Sign-in cancelled." in screen.status_text)
        # A known hub is asked as a hub at once: no look for a Talkie manifest or a gateway.
        assert "Talkie" not in screen.status_text


async def test_without_a_keyring_the_person_chooses_where_the_session_is_kept(
    hub: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, codes = hub
    app = app_for(url, tmp_path, storage="keyring", protocol="cuckoo")
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, StoreChoiceScreen) and app.screen.is_mounted
        )
        await pilot.pause()
        await pilot.click("#store-choice-session")
        await sign_in_on_screen(pilot, codes)
        await wait_for(pilot, lambda: chat_composed(app))
    assert not on_disk(url)  # this session only: nothing on disk
    assert kept_token(url) is not None
    entry = KnownServers.load(tmp_path / "servers.json").find(url)
    assert entry is not None and entry.protocol == "cuckoo" and not entry.signed_in


async def test_a_session_ended_elsewhere_is_signed_in_again_over_the_chat(
    hub: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, codes = hub
    app = app_for(url, tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await sign_in_on_screen(pilot, codes)
        await wait_for(pilot, lambda: chat_composed(app))
        chat = app.screen
        first = kept_token(url)
        assert first is not None
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            ended = await http.post(
                f"{url}/v1/auth/logout", headers={"Authorization": f"Bearer {first}"}
            )
        assert ended.status_code == 204, ended.text
        del codes[EMAIL]
        assert isinstance(chat, ChatScreen)
        chat.refresh_threads()  # the thread list asks the hub: 401
        await wait_for(pilot, lambda: screen_up(app, EmailSignInScreen))
        screen = app.screen
        assert isinstance(screen, EmailSignInScreen)
        assert "did not accept your sign-in" in screen.query_one("#email-reason").render().plain
        await sign_in_on_screen(pilot, codes)
        await wait_for(pilot, lambda: app.screen is chat)
        second = kept_token(url)
        assert second is not None and second != first
        assert await me_status(url, second) == 200
        assert isinstance(app.backend, CuckooBackend)
        await app.backend.account()  # the backend uses the new session


async def test_sign_out_ends_the_session_on_the_hub_and_forgets_it(
    hub: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    url, codes = hub
    app = app_for(url, tmp_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await sign_in_on_screen(pilot, codes)
        await wait_for(pilot, lambda: chat_composed(app))
        token = kept_token(url)
        assert token is not None
        assert app.check_action("sign_out", ()) and app.check_action("sign_in", ())
        await app.action_sign_out()
        await wait_for(pilot, lambda: isinstance(app.screen, ConnectScreen))
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        await wait_for(pilot, lambda: "session is ended" in screen.status_text)
    assert kept_token(url) is None
    assert await me_status(url, token) == 401
    entry = KnownServers.load(tmp_path / "servers.json").find(url)
    assert entry is not None and not entry.signed_in
