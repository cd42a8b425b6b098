"""The connect screen over real HTTP: the reference server, and small stubs for the errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp
from textual.pilot import Pilot
from textual.widget import Widget

from talkie_tui.config import KnownServer, KnownServers, Settings, save_logo
from talkie_tui.devserver.talkie.assets import logo_png
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.manifest import MANIFEST_PATH
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.connect import ConnectScreen, _known_row
from talkie_tui.ui.support.logo_drawing import HALF_BLOCK
from talkie_tui.ui.widgets.logo import LogoView
from tests.helpers import TEST_TOKEN
from tests.stub_server import ANOTHER_LOOPBACK, StubServer, manifest_document, talkie_app
from tests.ui.apps.connect_app import ConnectApp, steady_cursor

Serve = Callable[..., StubServer]
FOREIGN = f"http://{ANOTHER_LOOPBACK}:9"


@pytest.fixture
def known(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KnownServers:
    """An empty server list under a temporary TALKIE_HOME."""
    monkeypatch.setenv("TALKIE_HOME", str(tmp_path / "home"))
    return KnownServers.load()


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Factory: `serve(app, host="127.0.0.1") -> StubServer`, stopped after the test."""
    servers: list[StubServer] = []

    def start(app: ASGIApp, host: str = "127.0.0.1") -> StubServer:
        servers.append(StubServer(app, host).start())
        return servers[-1]

    yield start
    for server in servers:
        server.ask_to_stop()
    for server in servers:
        server.join()


async def until(pilot: Pilot[Any], condition: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the app run until `condition()` is true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await pilot.pause(0.02)


def foreign_manifest(origin: str) -> dict[str, Any]:
    """A manifest with one endpoint on another origin (voice on 127.0.0.2)."""
    document = manifest_document(origin, serverId="foreign.test", name="Foreign Stub")
    document["endpoints"]["voiceSessions"] = f"{FOREIGN}/voice/sessions"
    return document


async def settle(app: ConnectApp, pilot: Pilot[Any]) -> None:
    """Wait until the running discovery (if any) is over."""
    await until(pilot, lambda: not app.connect_screen.busy or isinstance(app.screen, ConfirmScreen))
    await pilot.pause()


# --- success -------------------------------------------------------------------------------


async def test_connect_to_the_reference_server(server_url: str, known: KnownServers) -> None:
    app = ConnectApp(server_url, known=known, token=TEST_TOKEN)
    async with app.run_test() as pilot:
        await until(pilot, lambda: app.connected)
        [client] = app.connected
        assert isinstance(client, TalkieClient)
        assert client.server.manifest.name == "Talkie Demo CRM"
        assert (await client.status()).chat  # the token went along: a real request works
        [entry] = known.all()
        assert entry.address == server_url and entry.name == "Talkie Demo CRM"
        assert "Connected to Talkie Demo CRM" in app.connect_screen.status_text
        # The list on screen shows the new server.
        assert app.connect_screen.known_list.get_option(entry.server_id)


async def test_typing_an_address_and_enter(server_url: str, known: KnownServers) -> None:
    app = ConnectApp(known=known, token=TEST_TOKEN)
    async with app.run_test() as pilot:
        screen = app.connect_screen
        assert screen.address_input.has_focus  # nothing known yet: start by typing
        screen.address_input.value = server_url
        await pilot.press("enter")
        await until(pilot, lambda: app.connected)
        assert app.connected[0].server.origin == server_url


async def test_known_servers_are_listed_and_enter_connects(
    server_url: str, known: KnownServers
) -> None:
    async with await TalkieClient.connect(server_url) as probe:
        known.remember(probe.server, server_url)
    older = json.loads(known.path.read_text())
    older["servers"]["old.example"] = {"address": "old.example", "name": "Old", "last_used": "1"}
    known.path.write_text(json.dumps(older))
    known.reload()

    app = ConnectApp(known=known, token=TEST_TOKEN)
    async with app.run_test() as pilot:
        screen = app.connect_screen
        options = screen.known_list
        assert options.has_focus  # the most recent server is one Enter away
        assert [o.id for o in options.options] == [probe.server.server_id, "old.example"]
        await pilot.press("enter")
        await until(pilot, lambda: app.connected)
        assert app.connected[0].server.server_id == probe.server.server_id
        assert screen.address_input.value == server_url


# --- discovery errors in words -----------------------------------------------------------------


def wrong_spec(serve: Serve) -> str:
    stub = serve(talkie_app(manifest=lambda o: manifest_document(o, spec="talkie/2")))
    return stub.origin


def not_https(serve: Serve) -> str:
    return "http://example.com"


def redirect_elsewhere(serve: Serve) -> str:
    other = serve(talkie_app(), host=ANOTHER_LOOPBACK)

    async def moved(request: Request) -> Response:
        return RedirectResponse(other.url(MANIFEST_PATH), status_code=302)

    return serve(talkie_app([Route(MANIFEST_PATH, moved)])).origin


def not_talkie(serve: Serve) -> str:
    return serve(talkie_app(manifest=lambda origin: None)).origin


def nobody_listens(serve: Serve) -> str:
    return "http://127.0.0.1:9"  # the discard port: connection refused


@pytest.mark.parametrize(
    ("make_address", "says", "hint"),
    [
        (wrong_spec, "speaks 'talkie/2', but this client speaks talkie/1", "Trying again will not"),
        (not_https, "uses plain http. Talkie needs https", "Check the address"),
        (redirect_elsewhere, "redirects to another site (http://127.0.0.2:", "operator"),
        (not_talkie, "is not a Talkie server (no /.well-known/talkie.json, HTTP 404)", "address"),
        (nobody_listens, "Could not connect to http://127.0.0.1:9", "Trying again may help"),
    ],
    ids=["wrong spec version", "not https", "redirect to another origin", "404", "refused"],
)
async def test_discovery_errors_are_shown_in_words(
    serve: Serve,
    known: KnownServers,
    make_address: Callable[[Serve], str],
    says: str,
    hint: str,
) -> None:
    app = ConnectApp(make_address(serve), known=known)
    async with app.run_test() as pilot:
        await settle(app, pilot)
        status = app.connect_screen.status_text
        assert status.startswith("✗ ")
        assert says in status
        assert hint in status
        assert app.connected == []
        assert known.all() == []


async def test_an_empty_address_asks_for_one(known: KnownServers) -> None:
    app = ConnectApp(known=known)
    async with app.run_test() as pilot:
        await pilot.press("enter")
        assert "Type the address of a server" in app.connect_screen.status_text


async def test_escape_stops_a_slow_discovery(serve: Serve, known: KnownServers) -> None:
    async def slow(request: Request) -> Response:
        await asyncio.sleep(10)
        return Response("late")

    stub = serve(talkie_app([Route(MANIFEST_PATH, slow)]))
    app = ConnectApp(stub.origin, known=known)
    async with app.run_test() as pilot:
        screen = app.connect_screen
        await until(pilot, lambda: screen.busy)
        assert "Looking for a server at" in screen.status_text
        await pilot.press("escape")
        await until(pilot, lambda: not screen.busy)
        assert screen.status_text == "Stopped."
        assert app.connected == []


# --- endpoints on another origin ---------------------------------------------------------------


async def test_foreign_endpoint_accepted_is_remembered(serve: Serve, known: KnownServers) -> None:
    stub = serve(talkie_app(manifest=foreign_manifest))
    app = ConnectApp(stub.origin, known=known, token="any")
    async with app.run_test() as pilot:
        await settle(app, pilot)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert "voiceSessions" in dialog.body_text and FOREIGN in dialog.body_text
        assert dialog.focused is not None and dialog.focused.id == "cancel"  # safe default
        await pilot.press("right", "enter")  # move to Accept, then press it
        await until(pilot, lambda: app.connected)
        client = app.connected[0]
        assert FOREIGN in client.server.accepted_origins
        assert client.server.endpoint("voiceSessions") == f"{FOREIGN}/voice/sessions"
    assert KnownServers.load(known.path).accepted_origins("foreign.test") == {FOREIGN}

    # The second time nothing is asked.
    again = ConnectApp(stub.origin, known=KnownServers.load(known.path), token="any")
    async with again.run_test() as pilot:
        await until(pilot, lambda: again.connected or isinstance(again.screen, ConfirmScreen))
        assert again.connected and not isinstance(again.screen, ConfirmScreen)


async def test_foreign_endpoint_refused_stays_unconnected(
    serve: Serve, known: KnownServers
) -> None:
    stub = serve(talkie_app(manifest=foreign_manifest))
    app = ConnectApp(stub.origin, known=known)
    async with app.run_test() as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("enter")  # Enter on the focused (safe) choice: Refuse
        await until(pilot, lambda: not app.connect_screen.busy)
        status = app.connect_screen.status_text
        assert "Not connected: you refused the endpoints of Foreign Stub" in status
        assert FOREIGN in status
        assert app.connected == []
        assert known.all() == []
        assert isinstance(app.screen, ConnectScreen)


# --- forgetting a server -------------------------------------------------------------------


def two_known(known: KnownServers) -> None:
    known.path.parent.mkdir(parents=True, exist_ok=True)
    known.path.write_text(
        json.dumps(
            {
                "servers": {
                    "crm.example.com": {
                        "address": "crm.example.com",
                        "name": "Example CRM",
                        "last_used": "2026-03-18T10:00:00+00:00",
                        "signed_in": True,
                    },
                    "helpdesk": {
                        "address": "https://help.example.org/talkie/manifest.json",
                        # Server text is data: markup in a name stays literal.
                        "name": "Helpdesk [b]bold[/b] [@click=app.quit]x[/]",
                        "last_used": "2026-03-17T10:00:00+00:00",
                    },
                }
            }
        )
    )
    known.reload()


async def test_delete_forgets_after_confirmation(known: KnownServers) -> None:
    two_known(known)
    app = ConnectApp(known=known)
    async with app.run_test() as pilot:
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.title_text == "Forget Example CRM?"
        await pilot.press("escape")  # changed my mind
        await pilot.pause()
        assert len(KnownServers.load(known.path)) == 2
        await pilot.press("delete")
        await pilot.pause()
        await pilot.press("right", "enter")
        await pilot.pause()
        assert [s.server_id for s in KnownServers.load(known.path).all()] == ["helpdesk"]
        assert [o.id for o in app.connect_screen.known_list.options] == ["helpdesk"]
        assert app.connect_screen.status_text == "Forgot Example CRM."


async def test_delete_in_the_address_box_edits_text(known: KnownServers) -> None:
    two_known(known)
    app = ConnectApp("", known=known)
    async with app.run_test() as pilot:
        app.connect_screen.address_input.focus()
        await pilot.pause()
        app.connect_screen.address_input.value = "abc"
        app.connect_screen.address_input.cursor_position = 0
        await pilot.press("delete")
        await pilot.pause()
        assert app.connect_screen.address_input.value == "bc"
        assert not isinstance(app.screen, ConfirmScreen)


async def test_broken_server_list_is_a_warning(known: KnownServers) -> None:
    known.path.parent.mkdir(parents=True, exist_ok=True)
    known.path.write_text("{broken")
    app = ConnectApp(known=KnownServers.load(known.path))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert "could not be read" in app.connect_screen.status_text


# --- inside the real app, with all its stylesheets ------------------------------------------


def real_app(tmp_path: Path, known: KnownServers, address: str | None = None) -> TalkieApp:
    """The real `TalkieApp` opening on the connect screen (as `talkie connect` does)."""
    return TalkieApp(address, settings=Settings(downloads_dir=tmp_path), known=known)


async def connect_screen_ready(pilot: Pilot[Any]) -> ConnectScreen:
    """Wait for the connect screen, its discovery (if any) and the logo's drawing."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, ConnectScreen))
    screen = app.screen
    assert isinstance(screen, ConnectScreen)
    await until(pilot, lambda: not screen.busy)
    await app.workers.wait_for_complete()
    steady_cursor(app)
    await pilot.pause()
    return screen


def visible(screen: ConnectScreen, widget: Widget) -> bool:
    """The widget takes room on screen and lies wholly inside the screen."""
    region = widget.region
    return region.width > 0 and region.height > 0 and screen.region.contains_region(region)


async def test_fresh_start_shows_the_address_box_focused(
    tmp_path: Path, known: KnownServers
) -> None:
    """`talkie connect` with nothing known: title, address box (focused) and the empty list."""
    app = real_app(tmp_path, known)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await connect_screen_ready(pilot)
        assert screen.address_input.has_focus
        assert screen.logo_slot.region.height == 0  # no logo to show: no gap above the title
        for selector in ("#connect-title", "#connect-address", "#known-title", "#known-servers"):
            assert visible(screen, screen.query_one(selector)), selector


async def test_a_logo_takes_bounded_room(tmp_path: Path, known: KnownServers) -> None:
    """The highlighted server's logo stays small: the address box and the list still show."""
    two_known(known)
    save_logo("crm.example.com", logo_png())
    app = real_app(tmp_path, known)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await connect_screen_ready(pilot)
        logo = screen.query_one("#connect-logo-view", LogoView)
        assert HALF_BLOCK in logo.render().plain
        assert 0 < logo.region.height <= 8
        for selector in ("#connect-address", "#known-servers", "#connect-hints"):
            assert visible(screen, screen.query_one(selector)), selector
        await pilot.resize_terminal(80, 24)  # a short terminal: a smaller logo
        await pilot.pause()
        assert 0 < logo.region.height <= 4
        assert visible(screen, screen.query_one("#known-servers"))


def test_snapshot_fresh_start(snap_compare, tmp_path: Path, known: KnownServers) -> None:
    """Nothing known yet: the title, the address box and "None yet"."""
    app = real_app(tmp_path, known)
    assert snap_compare(app, terminal_size=(120, 36), run_before=connect_screen_ready)


def test_snapshot_known_servers(snap_compare, tmp_path: Path, known: KnownServers) -> None:
    """Two known servers; the highlighted one has a cached logo, drawn at a bounded size."""
    two_known(known)
    save_logo("crm.example.com", logo_png())
    app = real_app(tmp_path, known)
    assert snap_compare(app, terminal_size=(120, 36), run_before=connect_screen_ready)


def test_snapshot_error(snap_compare, tmp_path: Path, known: KnownServers) -> None:
    """A refused address in a small terminal: the error and its hint under the address."""
    two_known(known)
    app = real_app(tmp_path, known, "http://example.com")
    assert snap_compare(app, terminal_size=(80, 24), run_before=connect_screen_ready)


def test_a_server_named_by_its_address_lists_the_address_once() -> None:
    hub = KnownServer("hub-1", "127.0.0.1:48711", name="Cuckoo hub · 127.0.0.1:48711")
    crm = KnownServer("crm-1", "crm.example.com", name="Example CRM")
    assert _known_row(hub).parts()[0].plain == "Cuckoo hub · 127.0.0.1:48711"
    assert _known_row(crm).parts()[0].plain == "Example CRM  crm.example.com"


async def test_the_command_lines_token_goes_to_its_server_only(
    devserver: Callable[..., str], tmp_path: Path
) -> None:
    """`talkie connect A --token T`, then another server picked: T is not sent there (it
    asks for its own sign-in), and the list says A is signed in, by the token."""
    first = devserver(test_mode=True, dev_token=TEST_TOKEN)
    other = devserver(test_mode=True, dev_token=TEST_TOKEN)
    known = KnownServers.load(tmp_path / "servers.json")
    settings = Settings(downloads_dir=tmp_path / "downloads", token_storage="file")
    app = TalkieApp(first, token=TEST_TOKEN, known=known, settings=settings)
    async with app.run_test(size=(100, 30)) as pilot:
        from talkie_tui.ui.chat.screen import ChatScreen
        from tests.ui.flows import screen_text

        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted, 30)
        await app.action_switch_server()
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, ConnectScreen) and bool(app.screen.query("#known-servers"))
            ),
            30,
        )
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        assert screen._tokens_given_for(first) and not screen._tokens_given_for(other)
        screen.address_input.value = other
        screen.address_input.focus()
        await pilot.press("enter")
        # Without the token, the other server asks for a sign-in of its own.
        await until(pilot, lambda: "only offers development tokens" in screen_text(app), 30)
        assert isinstance(app.screen, ConnectScreen)
