"""OAuthTokens: refresh once on 401, rotation kept, never a replay, sign-out (§2.1)."""

from __future__ import annotations

import asyncio

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.auth.signin import sign_out, tokens_for
from talkie_tui.auth.store import FileStore, MemoryStore, StoredGrant, TokenStoreError
from talkie_tui.auth.tokens import OAuthTokens
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.protocol.talkie.client import TalkieClient
from tests.auth.stub_authorization_server import TokenLedger, authorization_server
from tests.protocol.conftest import Serve
from tests.stub_server import ENDPOINTS, StubServer, error_response, manifest_document

SERVER_ID = "crm.test"
CLIENT_ID = "https://talkie.example/oauth/client.json"


@pytest.fixture
def ledger() -> TokenLedger:
    return TokenLedger()


@pytest.fixture
def issuer(serve: Serve, ledger: TokenLedger) -> str:
    return serve(authorization_server(ledger)).origin


def _tokens(issuer: str, store=None, **options) -> OAuthTokens:
    store = store or MemoryStore()
    if store.load(SERVER_ID) is None:
        store.save(SERVER_ID, StoredGrant("rt-0", issuer, CLIENT_ID, "talkie offline_access"))
    return OAuthTokens(
        server_id=SERVER_ID, issuer=issuer, client_id=CLIENT_ID, store=store, **options
    )


async def test_the_first_token_comes_from_the_stored_grant_and_rotation_is_kept(
    issuer: str, ledger: TokenLedger
) -> None:
    store = MemoryStore()
    tokens = _tokens(issuer, store)
    assert await tokens.token() == "at-1"
    assert await tokens.token() == "at-1"  # not refreshed again while it is fresh
    assert ledger.refresh_requests == 1
    assert store.load(SERVER_ID).refresh_token == "rt-1"
    await tokens.aclose()


async def test_a_rejected_token_is_refreshed_once_and_concurrent_callers_share_it(
    issuer: str, ledger: TokenLedger
) -> None:
    tokens = _tokens(issuer)
    first = await tokens.token()
    results = await asyncio.gather(*(tokens.refresh(first) for _ in range(5)))
    assert results == ["at-2"] * 5
    assert ledger.refresh_requests == 2
    await tokens.aclose()


async def test_two_token_sources_on_one_store_never_replay_a_rotated_token(
    issuer: str, ledger: TokenLedger
) -> None:
    """Two clients of one server (two windows) refresh in turn from the store, never twice."""
    store = FileStore()
    one, two = _tokens(issuer, store), _tokens(issuer, store)
    # Each source has its own asyncio lock: only the file lock keeps them apart.
    assert all(await asyncio.gather(one.token(), two.token()))
    assert all(await asyncio.gather(one.refresh("stale"), two.refresh("stale")))
    assert ledger.live_refresh and not (ledger.live_refresh & ledger.spent_refresh)
    assert store.load(SERVER_ID).refresh_token in ledger.live_refresh
    await asyncio.gather(one.aclose(), two.aclose())


async def test_an_invalid_grant_means_sign_in_again_and_the_grant_is_forgotten(
    issuer: str, ledger: TokenLedger
) -> None:
    store = MemoryStore()
    tokens = _tokens(issuer, store)
    ledger.live_refresh.clear()  # revoked on the server
    assert await tokens.token() is None
    assert store.load(SERVER_ID) is None
    await tokens.aclose()


async def test_a_grant_for_another_issuer_is_never_sent(issuer: str, ledger: TokenLedger) -> None:
    store = MemoryStore()
    store.save(SERVER_ID, StoredGrant("rt-0", "https://old-issuer.example", CLIENT_ID))
    tokens = _tokens(issuer, store)
    assert await tokens.token() is None
    assert ledger.refresh_requests == 0


async def test_a_store_that_cannot_save_keeps_the_session_going(
    issuer: str, ledger: TokenLedger
) -> None:
    class ReadOnly(MemoryStore):
        def save(self, server_id: str, grant: StoredGrant) -> None:
            if grant.refresh_token != "rt-0":
                raise TokenStoreError("the keyring is locked")
            super().save(server_id, grant)

    warnings: list[str] = []
    tokens = _tokens(issuer, ReadOnly(), warn=warnings.append)
    assert await tokens.token() == "at-1"
    assert await tokens.refresh("at-1") == "at-2"  # with rt-1 from memory, not the spent rt-0
    assert "the keyring is locked" in warnings[0]
    assert ledger.live_refresh == {"rt-2"}
    await tokens.aclose()


def _talkie_app(accepted: set[str]) -> object:
    from tests.stub_server import talkie_app

    async def status(request: Request) -> Response:
        auth = request.headers.get("authorization", "")
        if auth.removeprefix("Bearer ") in accepted:
            return JSONResponse({"user": {"id": "u1", "name": "Jana"}, "chat": True})
        return error_response(401, "unauthorized", "The token expired.")

    return talkie_app([Route(ENDPOINTS["status"], status)])


async def test_the_client_refreshes_once_on_401_then_asks_for_sign_in(
    serve: Serve, issuer: str, ledger: TokenLedger
) -> None:
    accepted = {"at-1"}  # what the Talkie server accepts
    stub: StubServer = serve(_talkie_app(accepted))
    tokens = _tokens(issuer)
    client = await TalkieClient.connect(stub.origin, tokens=tokens)
    assert (await client.status()).user.name == "Jana"
    accepted.clear()  # the server forgets every token: a refresh cannot help
    with pytest.raises(UnauthorizedError):
        await client.status()
    assert ledger.refresh_requests == 2  # one refresh, not a loop
    bearers = [r.headers.get("authorization") for r in stub.requests if "status" in r.path]
    assert bearers == ["Bearer at-1", "Bearer at-1", "Bearer at-2"]
    await client.aclose()


async def test_tokens_for_uses_the_stored_grant_of_that_server_only(
    serve: Serve, issuer: str
) -> None:
    stub = serve(_talkie_app(set()))
    client = await TalkieClient.connect(stub.origin)
    oauth_manifest = manifest_document(stub.origin, auth={"oauth": {"issuer": issuer}})
    assert tokens_for(client.server, client_id=CLIENT_ID, store=MemoryStore()) is None
    from talkie_tui.protocol.talkie.manifest import validate_manifest

    client.server.manifest, _ = validate_manifest(oauth_manifest, stub.origin)
    MemoryStore().save(client.server.server_id, StoredGrant("rt-0", issuer, CLIENT_ID))
    assert tokens_for(client.server, client_id=CLIENT_ID, store=None) is not None
    await client.aclose()


async def test_sign_out_revokes_then_forgets_even_when_revocation_fails(
    serve: Serve, issuer: str, ledger: TokenLedger
) -> None:
    store = FileStore()
    tokens = _tokens(issuer, store)
    await tokens.token()
    result = await sign_out(SERVER_ID, tokens=tokens)
    assert result.revoked and ledger.revoked == ["rt-1", "at-1"]
    assert store.load(SERVER_ID) is None and "tokens.json" in " ".join(result.forgotten_from)

    store.save(SERVER_ID, StoredGrant("rt-9", "http://127.0.0.1:9", CLIENT_ID))  # unreachable
    result = await sign_out(SERVER_ID)
    assert not result.revoked and "Could not connect" in result.problem
    assert store.load(SERVER_ID) is None
    assert "could not revoke" in result.describe() and "removed from" in result.describe()
