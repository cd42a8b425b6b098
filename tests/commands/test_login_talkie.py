"""`talkie login` to a Talkie server that offers no sign-in in the browser: the reference
server with only a development token, and one that takes requests without any."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from talkie_tui.commands.login import login
from talkie_tui.config import KnownServers

pytestmark = pytest.mark.slow


async def test_a_server_with_only_a_development_token_says_how_to_give_it(server_url: str) -> None:
    err = io.StringIO()
    code = await login(server_url, allow_private_http=True, stdin=io.StringIO(""), err=err)
    assert code == 3, err.getvalue()
    assert "only offers development tokens" in err.getvalue()
    entry = KnownServers.load().find(server_url)
    assert entry is None or not entry.signed_in


async def test_a_server_without_sign_in_has_nothing_to_sign_in_to(
    devserver: Callable[..., str],
) -> None:
    url = devserver(test_mode=True)
    err = io.StringIO()
    code = await login(url, allow_private_http=True, stdin=io.StringIO(""), err=err)
    assert code == 0, err.getvalue()
    assert "there is nothing to sign in to" in err.getvalue()
