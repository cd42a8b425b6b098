"""`talkie login` for a Minara gateway: its token asked (or $MINARA_TOKEN), tried, kept; then
`ask` uses it, `servers` lists it as signed in, and `logout` forgets it."""

from __future__ import annotations

import io

import pytest

from talkie_tui.auth.bearer_grants import find_bearer, keep_bearer
from talkie_tui.auth.file_store import FileStore
from talkie_tui.cli import main
from talkie_tui.commands.login import login, logout
from talkie_tui.config import KnownServers
from tests.helpers import TEST_TOKEN
from tests.ui.killable_proxy import KillableProxy

pytestmark = pytest.mark.slow


async def test_the_token_read_from_stdin_is_tried_and_kept(gateway_url: str) -> None:
    err = io.StringIO()
    code = await login(
        gateway_url,
        protocol="minara",
        store_kind="file",
        stdin=io.StringIO(TEST_TOKEN + "\n"),
        err=err,
    )
    assert code == 0, err.getvalue()
    assert "The token is kept in" in err.getvalue()
    kept = find_bearer(gateway_url, gateway_url, FileStore())
    assert kept is not None and kept[0] == TEST_TOKEN
    entry = KnownServers.load().find(gateway_url)
    assert entry is not None and entry.protocol == "minara" and entry.signed_in


async def test_a_wrong_token_is_refused_and_nothing_is_kept(gateway_url: str) -> None:
    err = io.StringIO()
    code = await login(
        gateway_url, protocol="minara", store_kind="file", stdin=io.StringIO("wrong\n"), err=err
    )
    assert code == 3
    assert "not valid" in err.getvalue()
    assert find_bearer(gateway_url, gateway_url, FileStore()) is None


async def test_a_gateway_is_found_without_protocol(gateway_url: str) -> None:
    err = io.StringIO()
    code = await login(
        gateway_url, store_kind="file", stdin=io.StringIO(TEST_TOKEN + "\n"), err=err
    )
    assert code == 0, err.getvalue()


async def test_a_gateway_without_a_token_needs_no_sign_in(minara_gateway: object) -> None:
    url = minara_gateway(test_mode=True)  # type: ignore[operator]
    err = io.StringIO()
    assert await login(url, protocol="minara", stdin=io.StringIO(""), err=err) == 0
    assert "without a token" in err.getvalue()


def test_then_ask_servers_and_logout(
    gateway_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(TEST_TOKEN + "\n"))
    assert main(["login", gateway_url, "--protocol", "minara", "--store", "file"]) == 0
    assert main(["ask", gateway_url, "minara-test:echo kept token works"]) == 0
    assert "kept token works" in capsys.readouterr().out
    assert main(["servers"]) == 0
    assert "signed in (file)" in capsys.readouterr().out
    assert main(["logout", gateway_url]) == 0
    assert find_bearer(gateway_url, gateway_url, FileStore()) is None
    assert main(["ask", gateway_url, "minara-test:echo again"]) == 3


async def test_login_again_asks_anew_and_a_refused_token_replaces_nothing(gateway_url: str) -> None:
    first = io.StringIO(TEST_TOKEN + "\n")
    assert await login(gateway_url, protocol="minara", store_kind="file", stdin=first) == 0
    err = io.StringIO()
    again = io.StringIO("wrong\n")
    code = await login(gateway_url, protocol="minara", store_kind="file", stdin=again, err=err)
    assert code == 3, err.getvalue()  # asked, not signed in with the kept token
    assert "not valid" in err.getvalue()
    kept = find_bearer(gateway_url, gateway_url, FileStore())
    assert kept is not None and kept[0] == TEST_TOKEN


async def test_logout_with_nothing_kept_forgets_nothing_and_says_so(gateway_url: str) -> None:
    stdin = io.StringIO(TEST_TOKEN + "\n")
    assert await login(gateway_url, store_kind="file", stdin=stdin, err=io.StringIO()) == 0
    err = io.StringIO()
    assert await logout(gateway_url, err=err) == 0, err.getvalue()
    assert "its token is forgotten" in err.getvalue()
    err = io.StringIO()
    assert await logout(gateway_url, err=err) == 0, err.getvalue()
    assert "no sign-in was kept for it." in err.getvalue()
    entry = KnownServers.load().find(gateway_url)
    assert entry is not None and not entry.signed_in


async def test_logout_forgets_a_token_the_gateway_no_longer_takes(gateway_url: str) -> None:
    stdin = io.StringIO(TEST_TOKEN + "\n")
    assert await login(gateway_url, store_kind="file", stdin=stdin, err=io.StringIO()) == 0
    keep_bearer(FileStore(), gateway_url, gateway_url, "changed-on-the-gateway")
    err = io.StringIO()
    assert await logout(gateway_url, err=err) == 0, err.getvalue()
    assert "it no longer took the sign-in kept in" in err.getvalue()
    assert find_bearer(gateway_url, gateway_url, FileStore()) is None


async def test_logout_of_a_gateway_that_is_down_still_forgets_its_token(gateway_url: str) -> None:
    """Signing out while the gateway cannot be reached: it is not told, and nothing is kept."""
    async with KillableProxy(gateway_url) as proxy:
        stdin = io.StringIO(TEST_TOKEN + "\n")
        err = io.StringIO()
        assert await login(proxy.origin, store_kind="file", stdin=stdin, err=err) == 0, (
            err.getvalue()
        )
        assert find_bearer(proxy.origin, proxy.origin, FileStore()) is not None
        await proxy.down()
        err = io.StringIO()
        assert await logout(proxy.origin, err=err) == 0, err.getvalue()
    assert "could not be reached" in err.getvalue()
    assert "is forgotten" in err.getvalue()
    assert find_bearer(proxy.origin, proxy.origin, FileStore()) is None
    entry = KnownServers.load().find(proxy.origin)
    assert entry is not None and not entry.signed_in
