"""The Minara backend's sign-in and what it does not offer, against the reference gateway."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from talkie_tui.auth.bearer_grants import keep_bearer
from talkie_tui.auth.grants import StoredGrant
from talkie_tui.auth.store import MemoryStore
from talkie_tui.backends import connect
from talkie_tui.backends.base import Decides, KeptSignIn, TakesTaps
from talkie_tui.backends.minara.backend import (
    MinaraBackend,
    kept_token,
    minara_base,
)
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.core.tokens import StaticToken
from tests.helpers import TEST_TOKEN


def keep(origin: str, token: str) -> MemoryStore:
    store = MemoryStore()
    keep_bearer(store, origin, origin, token)  # as the TUI keeps a pasted token
    return store


async def test_the_token_kept_for_the_gateways_origin_is_used(gateway_url: str) -> None:
    origin = gateway_url.rstrip("/")
    store = keep(origin, TEST_TOKEN)
    backend = await connect(gateway_url, kept=KeptSignIn(lambda: store, "unused"))
    try:
        assert isinstance(backend, MinaraBackend) and backend.info.sign_in == "token"
        assert backend.info.server_id == origin
    finally:
        await backend.aclose()


async def test_a_kept_token_that_is_refused_asks_for_a_new_one(gateway_url: str) -> None:
    store = keep(gateway_url.rstrip("/"), "stale")
    with pytest.raises(UnauthorizedError):
        await connect(gateway_url, protocol="minara", kept=KeptSignIn(lambda: store, "unused"))


def test_only_a_gateway_token_for_that_origin_is_taken() -> None:
    store = MemoryStore()
    store.save("http://a:1", StoredGrant("t", issuer="http://a:1", client_id="talkie-oauth"))
    keep_bearer(store, "http://b:1", "http://elsewhere", "t")
    assert kept_token(store, "http://a:1") is None
    assert kept_token(store, "http://b:1") is None
    assert kept_token(None, "http://a:1") is None


def test_a_bare_loopback_address_is_the_default_port() -> None:
    assert minara_base("localhost") == "http://localhost:8080/"
    assert minara_base("127.0.0.1") == "http://127.0.0.1:8080/"
    assert minara_base("localhost:9000") == "http://localhost:9000/"


async def test_talkie_only_members_say_they_are_not_offered(
    minara_gateway: Callable[..., str],
) -> None:
    url = minara_gateway(test_mode=True, auth_token=TEST_TOKEN)
    backend = await connect(url, protocol="minara", tokens=StaticToken(TEST_TOKEN))
    assert isinstance(backend, MinaraBackend)
    try:
        assert not isinstance(backend, Decides)  # actions are talkie/1's
        assert not isinstance(backend, TakesTaps)  # buttons are a hub's
        assert await backend.logo() is None
        backend.use_tokens(StaticToken("wrong"))
        with pytest.raises(UnauthorizedError):
            await backend.account()
        backend.use_tokens(StaticToken(TEST_TOKEN))
        await backend.account()
    finally:
        await backend.aclose()


async def test_the_thread_list_reads_every_page_newest_first(
    minara_gateway: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    from talkie_tui.backends.minara import backend as minara_backend

    url = minara_gateway(test_mode=True)
    async with httpx.AsyncClient(base_url=url) as http:
        for number in range(7):
            answer = await http.post("/v1/sessions", json={"title": f"Session {number}"})
            assert answer.status_code == 200
    backend = await connect(url, protocol="minara")
    monkeypatch.setattr(minara_backend, "PAGE_SIZE", 3)  # seven sessions: three pages
    try:
        threads = await backend.threads()
    finally:
        await backend.aclose()
    assert [t.title for t in threads] == [f"Session {n}" for n in reversed(range(7))]
