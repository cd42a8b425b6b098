"""A Minara gateway's token in the real app, beyond the first sign-in (`test_gateway_sign_in`):
the token changed on the gateway mid-session (REST 401 and socket close 4401) asked for again
over the chat with nothing the person typed lost, and where the token is kept when there is no
system keyring (the private file or this session only, as the person chooses).

The gateway is the reference one over real HTTP and WebSocket on 127.0.0.1; "the token changed"
is what an operator does: the gateway restarted with another `GATEWAY_AUTH_TOKEN`, on the same
port and database.
"""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot
from textual.widgets import Button, Input, Static

from talkie_tui.auth.bearer_grants import find_bearer, keep_bearer
from talkie_tui.auth.file_store import FileStore
from talkie_tui.auth.store import MemoryStore
from talkie_tui.chat.turns import NoticePart
from talkie_tui.config import KnownServers, Settings, config_dir
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.connect import ConnectScreen
from talkie_tui.ui.screens.store_choice import StoreChoiceScreen
from talkie_tui.ui.screens.token_prompt import TokenScreen
from talkie_tui.ui.widgets.notice import NoticeView
from tests.helpers import TEST_TOKEN
from tests.ui.flows import chat_composed
from tests.ui.minara_e2e import SIZE, WAIT, answer_text, chat, say, screen_text, until

pytestmark = pytest.mark.slow

NEW_TOKEN = "rotated-token-2"


class Gateway:
    """The reference gateway (test mode) that an operator restarts with another token, on the
    same port and database."""

    def __init__(self, folder: Path) -> None:
        self.db = folder / "gateway.sqlite3"
        self.port = 0
        self.url = ""
        self._running: AbstractContextManager[str] | None = None

    def start(self, token: str) -> str:
        config = GatewayConfig(
            auth_token=token,
            db_path=self.db,
            test_mode=True,
            port=self.port,
            demo_delay=0,
            # A `slow` answer long enough (10 s) that the restart always cuts it, however long
            # a loaded machine takes to type the draft before it.
            slow_delay=0.5,
        )
        self._running = serve_in_thread(config)
        self.url = self._running.__enter__()
        self.port = int(self.url.rsplit(":", 1)[1])
        return self.url

    def stop(self) -> None:
        if self._running is not None:
            running, self._running = self._running, None
            running.__exit__(None, None, None)

    async def restart(self, token: str) -> None:
        """Stop and start again with `token` (in a thread: the app's loop goes on meanwhile)."""
        await asyncio.to_thread(self.stop)
        await asyncio.to_thread(self.start, token)


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    running = Gateway(tmp_path)
    running.start(TEST_TOKEN)
    try:
        yield running
    finally:
        running.stop()


def app_for(url: str, tmp_path: Path, storage: str = "file") -> TalkieApp:
    """`talkie connect URL` with the token storage the settings name."""
    settings = Settings(token_storage=storage, downloads_dir=tmp_path / "downloads")
    known = KnownServers.load(tmp_path / "servers.json")
    return TalkieApp(url, settings=settings, known=known)


def kept_in_file(url: str) -> str | None:
    """The token the private file keeps for the gateway at `url`."""
    found = find_bearer(url, url, FileStore())
    return found[0] if found is not None else None


async def token_screen(pilot: Pilot[None]) -> TokenScreen:
    """The token screen, mounted and taking keys."""
    app = pilot.app
    await until(
        pilot,
        lambda: (
            isinstance(app.screen, TokenScreen)
            and app.screen.is_mounted
            and bool(app.screen.query("#token-input"))
        ),
        WAIT,
    )
    screen = app.screen
    assert isinstance(screen, TokenScreen)
    return screen


async def give_token(pilot: Pilot[None], screen: TokenScreen, token: str) -> None:
    """Type `token` into the token screen and press Enter."""
    box = screen.query_one("#token-input", Input)
    box.value = token
    box.focus()
    await pilot.press("enter")


async def user_rows(url: str, token: str) -> list[str]:
    """The person's messages the gateway stored, over all its sessions, oldest first."""
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=10) as http:
        sessions = (await http.get("/v1/sessions")).raise_for_status().json()["sessions"]
        rows: list[dict[str, Any]] = []
        for session in sessions:
            detail = (await http.get(f"/v1/sessions/{session['id']}")).raise_for_status().json()
            rows += [row for row in detail["messages"] if row["role"] == "user"]
    return [row["content"] for row in sorted(rows, key=lambda row: row["created_at"])]


# --- the token changed on the gateway mid-session ---------------------------------------------


async def test_a_token_changed_mid_session_is_asked_for_and_the_message_is_sent_with_retry(
    gateway: Gateway, tmp_path: Path
) -> None:
    """REST 401: the message sent after the change stays with Retry, the token screen asks over
    the chat (a wrong token is refused there), and with the new one Retry sends the message."""
    keep_bearer(FileStore(), gateway.url, gateway.url, TEST_TOKEN)  # signed in earlier
    app = app_for(gateway.url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:echo before the change")
        assert answer_text(screen) == "before the change"

        await gateway.restart(NEW_TOKEN)
        await say(pilot, screen, "minara-test:echo after the change", wait=False)
        asked = await token_screen(pilot)
        reason = str(asked.query_one("#token-reason", Static).content)
        assert "did not accept the token" in reason and "what you typed are kept" in reason
        assert asked.kept_in  # where the new token will be kept is said before
        # The message is still in the conversation under the token screen, with Retry.
        user = screen.session.conversation.turns[-1]
        assert user.role == "user" and user.text == "minara-test:echo after the change"
        notice = next(p for p in user.parts if isinstance(p, NoticePart))
        assert notice.kind == "not_delivered" and notice.retryable
        # What the notice says fits its Retry: the sign-in comes next, then retrying helps.
        assert "Retry once you are signed in again." in notice.text
        assert "will not help" not in notice.text

        await give_token(pilot, asked, "still-the-old-one")
        await until(pilot, lambda: "Not signed in" in asked.status_text, WAIT)
        assert app.screen is asked  # asked again, nothing else happened
        await give_token(pilot, asked, NEW_TOKEN)
        await until(pilot, lambda: app.screen is screen, WAIT)
        assert kept_in_file(gateway.url) == NEW_TOKEN  # the new token replaced the old one
        assert "Signed in to" in " ".join(str(note.message) for note in app._notifications)

        await until(pilot, lambda: bool(screen.transcript.query(NoticeView)), WAIT)
        retry = screen.transcript.query(NoticeView).last().query_one(Button)
        retry.press()
        await until(pilot, lambda: answer_text(screen) == "after the change", WAIT)
        await until(pilot, lambda: not screen.answering, WAIT)
        assert "after the change" in screen_text(app)

    assert await user_rows(gateway.url, NEW_TOKEN) == [
        "minara-test:echo before the change",
        "minara-test:echo after the change",  # once: the refused send never reached it
    ]


async def test_a_token_changed_during_an_answer_is_asked_for_and_the_draft_is_kept(
    gateway: Gateway, tmp_path: Path
) -> None:
    """Socket close 4401: the gateway restarts with another token while an answer streams; the
    stream's reconnect is refused, the token screen asks, and the draft the person was typing
    meanwhile is still in the composer after it, and goes out with the new token. Retry on the
    broken turn shows what the gateway kept of it, without storing the message twice."""
    keep_bearer(FileStore(), gateway.url, gateway.url, TEST_TOKEN)
    app = app_for(gateway.url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:slow", wait=False)
        await until(pilot, lambda: "part 2 " in answer_text(screen), WAIT)
        screen.composer.focus()
        await pilot.press(*"minara-test:echo half a thought")  # typed, not sent

        await gateway.restart(NEW_TOKEN)
        asked = await token_screen(pilot)
        assert "close 4401" in str(asked.query_one("#token-reason", Static).content)
        await give_token(pilot, asked, NEW_TOKEN)
        await until(pilot, lambda: app.screen is screen, WAIT)
        await until(pilot, lambda: not screen.answering, WAIT)
        assert screen.composer.text == "minara-test:echo half a thought"  # nothing was lost
        assert kept_in_file(gateway.url) == NEW_TOKEN

        retry = screen.transcript.query(NoticeView).last().query_one(Button)
        retry.press()  # the same client_message_id: the gateway keeps the message once
        await until(pilot, lambda: not screen.answering, WAIT)
        # What the gateway kept of it, marked cut short in the gateway's words (its restart).
        await until(pilot, lambda: "The answer is incomplete" in _notices(screen), WAIT)
        assert answer_text(screen).startswith("part 1 part 2 ")

        screen.composer.focus()
        await pilot.press("enter")  # the draft, sent now
        await until(pilot, lambda: answer_text(screen) == "half a thought", WAIT)
        await until(pilot, lambda: not screen.answering, WAIT)

    assert await user_rows(gateway.url, NEW_TOKEN) == [
        "minara-test:slow",
        "minara-test:echo half a thought",
    ]


# --- no system keyring: the person chooses where the token is kept ----------------------------


@pytest.fixture
def mounted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the sign-in screens shown, in order (the choice of store, the token)."""
    shown: list[str] = []

    def recorded(original: Callable[[Any], None]) -> Callable[[Any], None]:
        def on_mount(screen: Any) -> None:  # one parameter: Textual passes no event to it
            shown.append(type(screen).__name__)
            original(screen)

        return on_mount

    for screen_class in (StoreChoiceScreen, TokenScreen):
        monkeypatch.setattr(screen_class, "on_mount", recorded(screen_class.on_mount))
    return shown


async def store_choice(pilot: Pilot[None]) -> StoreChoiceScreen:
    """The choice of store, mounted, Cancel focused (as it comes up)."""
    app = pilot.app
    await until(
        pilot, lambda: isinstance(app.screen, StoreChoiceScreen) and app.screen.is_mounted, WAIT
    )
    screen = app.screen
    assert isinstance(screen, StoreChoiceScreen)
    await until(pilot, lambda: screen.focused is not None, WAIT)
    return screen


def files_holding(folder: Path, secret: str) -> list[Path]:
    """The files under `folder` whose bytes contain `secret`."""
    return [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


async def test_without_a_keyring_the_private_file_keeps_the_token_for_next_time(
    gateway_url: str, tmp_path: Path, mounted: list[str]
) -> None:
    """The keyring named in the settings is not usable: the choice appears before the token is
    asked; "private file" keeps the token in TALKIE_HOME, 0600, and the next start uses it
    without asking anything."""
    app = app_for(gateway_url, tmp_path, storage="keyring")
    async with app.run_test(size=SIZE) as pilot:
        choice = await store_choice(pilot)
        assert choice.focused is not None and choice.focused.id == "store-choice-session"
        assert choice.choices[0] == f"Keep it in a private file (0600) in {config_dir()}"
        body = str(choice.query_one("#store-choice-body", Static).content)
        assert "none is usable here" in body
        await pilot.click("#store-choice-file")
        asked = await token_screen(pilot)
        assert asked.kept_in == FileStore().describe()  # said before the token is given
        await give_token(pilot, asked, TEST_TOKEN)
        await until(pilot, lambda: chat_composed(app), WAIT)
        assert app.settings.token_storage == "file"  # for this run; config.toml untouched
    assert mounted == ["StoreChoiceScreen", "TokenScreen"]

    tokens = config_dir() / "tokens.json"
    assert files_holding(config_dir(), TEST_TOKEN) == [tokens]
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert kept_in_file(gateway_url) == TEST_TOKEN
    assert not (config_dir() / "config.toml").exists()
    entry = KnownServers.load(tmp_path / "servers.json").find(gateway_url)
    assert entry is not None and entry.signed_in  # it lasts

    mounted.clear()
    again = app_for(gateway_url, tmp_path, storage="keyring")  # still no keyring
    async with again.run_test(size=SIZE) as pilot:
        screen = await chat(again, pilot)  # connected with the kept token, nothing asked
        await say(pilot, screen, "minara-test:echo with the kept token")
        assert answer_text(screen) == "with the kept token"
    assert mounted == []  # neither the choice nor the token was asked


async def test_without_a_keyring_this_session_only_writes_nothing_to_disk(
    gateway_url: str, tmp_path: Path, mounted: list[str]
) -> None:
    """ "This session only": the token works now, is kept in memory, and no file anywhere under
    TALKIE_HOME or the test's folder holds it; a new talkie (memory gone) asks again."""
    app = app_for(gateway_url, tmp_path, storage="keyring")
    async with app.run_test(size=SIZE) as pilot:
        await store_choice(pilot)
        await pilot.click("#store-choice-session")
        asked = await token_screen(pilot)
        assert asked.kept_in == MemoryStore().describe()
        await give_token(pilot, asked, TEST_TOKEN)
        await until(pilot, lambda: chat_composed(app), WAIT)
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await say(pilot, screen, "minara-test:echo for now")
        assert answer_text(screen) == "for now"
        assert app.settings.token_storage == "session"

    found = find_bearer(gateway_url, gateway_url, MemoryStore())
    assert found is not None and found[0] == TEST_TOKEN and found[1].kind == "session"
    assert not (config_dir() / "tokens.json").exists()
    assert files_holding(config_dir(), TEST_TOKEN) == []
    assert files_holding(tmp_path, TEST_TOKEN) == []  # the known servers' list among them
    entry = KnownServers.load(tmp_path / "servers.json").find(gateway_url)
    assert entry is not None and not entry.signed_in

    MemoryStore().discard(gateway_url)  # what a new talkie process starts with
    mounted.clear()
    again = app_for(gateway_url, tmp_path, storage="keyring")
    async with again.run_test(size=SIZE) as pilot:
        await store_choice(pilot)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(again.screen, ConnectScreen), WAIT)
    assert mounted == ["StoreChoiceScreen"]


async def test_without_a_keyring_cancel_asks_for_no_token_and_keeps_nothing(
    gateway_url: str, tmp_path: Path, mounted: list[str]
) -> None:
    """Cancel (the button; Esc does the same): no token screen, the connect screen says the
    sign-in was cancelled, nothing is kept."""
    app = app_for(gateway_url, tmp_path, storage="keyring")
    async with app.run_test(size=SIZE) as pilot:
        await store_choice(pilot)
        await pilot.click("#store-choice-cancel")
        await until(pilot, lambda: isinstance(app.screen, ConnectScreen), WAIT)
        connect = app.screen
        assert isinstance(connect, ConnectScreen)
        await until(pilot, lambda: "Sign-in cancelled." in connect.status_text, WAIT)
        assert app.backend is None
    assert mounted == ["StoreChoiceScreen"]
    assert find_bearer(gateway_url, gateway_url) is None
    assert files_holding(config_dir(), TEST_TOKEN) == []


def _notices(screen: ChatScreen) -> str:
    return " ".join(
        str(view.part.text) for view in screen.transcript.query(NoticeView).results(NoticeView)
    )
