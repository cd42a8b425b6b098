"""A small authorization server on 127.0.0.1 for unit tests of the token source.

It rotates refresh tokens and revokes the whole family when an old one is replayed, like
oidc-provider does; the end-to-end suite (tests/oauth/) uses the real thing.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class TokenLedger:
    """What the stub issued, and what it was asked."""

    live_refresh: set[str] = field(default_factory=lambda: {"rt-0"})
    spent_refresh: set[str] = field(default_factory=set)
    access: set[str] = field(default_factory=set)
    refresh_requests: int = 0
    revoked: list[str] = field(default_factory=list)
    expires_in: int = 3600
    rotate: bool = True
    numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


async def _form(request: Request) -> dict[str, str]:
    # Parsed by hand: Starlette's request.form() needs python-multipart, which talkie lacks.
    pairs = parse_qs((await request.body()).decode(), keep_blank_values=True)
    return {key: values[0] for key, values in pairs.items()}


def authorization_server(ledger: TokenLedger) -> Starlette:
    """The Starlette app: metadata, token (refresh grant) and revocation endpoints."""

    async def metadata(request: Request) -> Response:
        issuer = f"http://{request.url.netloc}"
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/auth",
                "token_endpoint": f"{issuer}/token",
                "revocation_endpoint": f"{issuer}/revoke",
                "code_challenge_methods_supported": ["S256"],
                "response_types_supported": ["code"],
            }
        )

    async def token(request: Request) -> Response:
        form = await _form(request)
        ledger.refresh_requests += 1
        given = str(form.get("refresh_token", ""))
        if form.get("grant_type") != "refresh_token" or given not in ledger.live_refresh:
            if given in ledger.spent_refresh:
                ledger.live_refresh.clear()  # reuse detected: the whole family dies
            return JSONResponse(
                {"error": "invalid_grant", "error_description": "grant request is invalid"}, 400
            )
        number = next(ledger.numbers)
        access = f"at-{number}"
        ledger.access.add(access)
        body = {"access_token": access, "token_type": "Bearer", "expires_in": ledger.expires_in}
        if ledger.rotate:
            ledger.live_refresh.discard(given)
            ledger.spent_refresh.add(given)
            ledger.live_refresh.add(f"rt-{number}")
            body["refresh_token"] = f"rt-{number}"
        return JSONResponse(body)

    async def revoke(request: Request) -> Response:
        form = await _form(request)
        ledger.revoked.append(str(form.get("token")))
        ledger.live_refresh.discard(str(form.get("token")))
        ledger.access.discard(str(form.get("token")))
        return Response(status_code=200)

    return Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server", metadata),
            Route("/token", token, methods=["POST"]),
            Route("/revoke", revoke, methods=["POST"]),
        ]
    )
