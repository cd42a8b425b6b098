"""Signing in, on every protocol alike, in the real app: with nothing kept the person is asked
(in the protocol's own way), what they gave is kept and used the next time without asking, and
after a sign-out it is forgotten, so the next start asks again.

Each protocol's reference server asks its own way: the Talkie server through OAuth (a real
authorization server, oidc-provider, its login form driven over HTTP), the Minara gateway for
its bearer token, the Cuckoo hub for an e-mail address and the code it sent (its code sink
hands it to the test). What is kept is kept in the private file (`token_storage = "file"`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from talkie_tui.auth.file_store import FileStore
from talkie_tui.backends.base import ProtocolName
from talkie_tui.config import KnownServers, Settings
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.screens.connect import ConnectScreen
from talkie_tui.ui.screens.email_sign_in import EmailSignInScreen
from talkie_tui.ui.screens.sign_in import SignInScreen
from talkie_tui.ui.screens.token_prompt import TokenScreen
from tests.behaviour.conftest import PROTOCOLS
from tests.helpers import TEST_TOKEN
from tests.oauth_provider import OidcProvider, browse_to_callback
from tests.ui.flows import chat_composed, until
from tests.ui.test_hub_sign_in import sign_in_on_screen
from tests.ui.test_sign_in import no_browser, paste

__all__ = ["no_browser"]  # autouse: no browser is ever opened

pytestmark = pytest.mark.slow

SIZE = (110, 36)
WAIT = 30.0

Answer = Callable[[Pilot[None]], Awaitable[None]]


@dataclass
class SignInCase:
    """A reference server that wants a person signed in, and how the person answers it."""

    protocol: ProtocolName
    address: str
    asks: type[Any]  # the screen that asks the person
    answer: Answer  # answers that screen, once it is up
    settings: dict[str, Any] = field(default_factory=dict)


@pytest.fixture(params=PROTOCOLS)
def case(
    request: pytest.FixtureRequest,
    devserver: Callable[..., str],
    minara_gateway: Callable[..., str],
    cuckoo_hub: Callable[..., str],
) -> Iterator[SignInCase]:
    """Each protocol's reference server, with sign-in required."""
    protocol: ProtocolName = request.param
    if protocol == "talkie":
        provider: OidcProvider = request.getfixturevalue("oidc_provider")
        url = devserver(
            test_mode=True,
            oauth_issuer=provider.issuer,
            oauth_client_id=provider.resource_client_id,
            oauth_client_secret=provider.resource_client_secret,
            oauth_audience=provider.audience,
        )

        async def in_the_browser(pilot: Pilot[None]) -> None:
            screen = pilot.app.screen
            assert isinstance(screen, SignInScreen)
            await until(pilot, lambda: bool(screen.url), WAIT)
            callback = await asyncio.to_thread(browse_to_callback, screen.url, user="alice")
            await paste(pilot, screen, callback)

        settings = {"oauth_client_id": provider.client_id}
        yield SignInCase("talkie", url, SignInScreen, in_the_browser, settings)
    elif protocol == "minara":
        url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)

        async def the_token(pilot: Pilot[None]) -> None:
            box = pilot.app.screen.query_one("#token-input", Input)
            box.value = TEST_TOKEN
            box.focus()
            await pilot.press("enter")

        yield SignInCase("minara", url, TokenScreen, the_token)
    else:
        codes: dict[str, str] = {}
        url = cuckoo_hub(code_sink=codes.__setitem__, code_rate=(1000.0, 1000))

        async def the_emailed_code(pilot: Pilot[None]) -> None:
            await sign_in_on_screen(pilot, codes)

        yield SignInCase("cuckoo", url, EmailSignInScreen, the_emailed_code)


def app_on(case: SignInCase, tmp_path: Path) -> TalkieApp:
    """A new start of the app on the server, with nothing given but the address."""
    settings = Settings(downloads_dir=tmp_path, token_storage="file", **case.settings)
    return TalkieApp(
        case.address, settings=settings, known=KnownServers.load(tmp_path / "servers.json")
    )


def asking(app: TalkieApp, case: SignInCase) -> bool:
    """The app asks the person to sign in, its screen up."""
    screen = app.screen
    return isinstance(screen, case.asks) and screen.is_mounted


async def opened(app: TalkieApp, pilot: Pilot[None], case: SignInCase) -> bool:
    """Wait for the chat or for a question: True when the app asked to sign in."""
    await until(pilot, lambda: asking(app, case) or chat_composed(app), WAIT)
    return asking(app, case)


async def test_asked_then_kept_and_forgotten_on_sign_out(case: SignInCase, tmp_path: Path) -> None:
    first = app_on(case, tmp_path)
    async with first.run_test(size=SIZE) as pilot:
        assert await opened(first, pilot, case)  # nothing kept: asked
        await case.answer(pilot)
        await until(pilot, lambda: chat_composed(first), WAIT)
        assert first.backend is not None and first.backend.info.protocol == case.protocol
        server_id = first.backend.info.server_id
    assert FileStore().load(server_id) is not None

    kept = app_on(case, tmp_path)
    async with kept.run_test(size=SIZE) as pilot:
        assert not await opened(kept, pilot, case)  # kept: straight into the chat
        await kept.run_action("sign_out")
        await until(pilot, lambda: isinstance(kept.screen, ConnectScreen), WAIT)
        await until(pilot, lambda: FileStore().load(server_id) is None, WAIT)
        await kept.workers.wait_for_complete()  # the server told, before the app quits

    forgotten = app_on(case, tmp_path)
    async with forgotten.run_test(size=SIZE) as pilot:
        assert await opened(forgotten, pilot, case)  # forgotten: asked again
