"""RFC 8414 discovery of the authorization server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from talkie_tui.auth.errors import SignInError
from talkie_tui.auth.metadata import discover_auth_server, discovery_urls
from tests.protocol.conftest import Serve


def test_discovery_urls_insert_the_path_then_fall_back_to_openid() -> None:
    assert discovery_urls("https://h.example/tenant/a") == [
        "https://h.example/.well-known/oauth-authorization-server/tenant/a",
        "https://h.example/.well-known/openid-configuration/tenant/a",
        "https://h.example/tenant/a/.well-known/openid-configuration",
    ]
    assert discovery_urls("https://h.example") == [
        "https://h.example/.well-known/oauth-authorization-server",
        "https://h.example/.well-known/openid-configuration",
    ]


def _metadata(issuer: str, **overrides: Any) -> dict[str, Any]:
    document = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/auth",
        "token_endpoint": f"{issuer}/token",
        "revocation_endpoint": f"{issuer}/token/revocation",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
    }
    document.update(overrides)
    return {k: v for k, v in document.items() if v is not None}


def _as_app(path: str, make: Any) -> Starlette:
    async def handler(request: Request) -> JSONResponse | PlainTextResponse:
        issuer = f"http://{request.url.netloc}/tenant"
        document = make(issuer)
        if isinstance(document, str):
            return PlainTextResponse(document)
        return JSONResponse(document)

    return Starlette(routes=[Route(path, handler)])


async def _discover(serve: Serve, path: str, make: Any) -> Any:
    stub = serve(_as_app(path, make))
    async with httpx.AsyncClient() as http:
        return await discover_auth_server(http, f"{stub.origin}/tenant"), stub


async def test_rfc8414_metadata_with_the_path_inserted(serve: Serve) -> None:
    found, stub = await _discover(
        serve, "/.well-known/oauth-authorization-server/tenant", _metadata
    )
    assert found.issuer == f"{stub.origin}/tenant"
    assert found.token_endpoint == f"{stub.origin}/tenant/token"
    assert found.revocation_endpoint == f"{stub.origin}/tenant/token/revocation"
    assert found.iss_parameter_supported


async def test_the_openid_configuration_is_the_fallback(serve: Serve) -> None:
    found, stub = await _discover(serve, "/tenant/.well-known/openid-configuration", _metadata)
    assert found.authorization_endpoint == f"{stub.origin}/tenant/auth"
    assert stub.paths()[0] == "/.well-known/oauth-authorization-server/tenant"


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda i: _metadata("https://evil.example/tenant"), "names the issuer"),
        (lambda i: _metadata(i, code_challenge_methods_supported=None), "S256"),
        (lambda i: _metadata(i, code_challenge_methods_supported=["plain"]), "S256"),
        (lambda i: _metadata(i, token_endpoint="http://evil.example/token"), "https"),
        (lambda i: _metadata(i, authorization_endpoint="javascript:alert(1)"), "endpoint"),
        (lambda i: "not json", "no usable metadata"),
        (lambda i: ["a", "list"], "no usable metadata"),
    ],
)
async def test_unsafe_or_unusable_metadata_is_refused(serve: Serve, make: Any, words: str) -> None:
    with pytest.raises(SignInError, match=words):
        await _discover(serve, "/.well-known/oauth-authorization-server/tenant", make)


async def test_no_metadata_anywhere_says_where_it_looked(serve: Serve) -> None:
    stub = serve(Starlette(routes=[]))
    async with httpx.AsyncClient() as http:
        with pytest.raises(SignInError) as failed:
            await discover_auth_server(http, stub.origin)
    assert "HTTP 404" in failed.value.message and failed.value.retryable


async def test_a_plain_http_issuer_off_this_computer_is_refused() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(SignInError, match="plain http"):
            await discover_auth_server(http, "http://login.example.com")
