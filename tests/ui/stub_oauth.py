"""A small authorization server and a talkie/1 server that trusts it, for the sign-in UI tests.

The authorization server answers the authorization request at once with a redirect to the
client's redirect URI (as a browser would see it after a sign-in), trades codes and refresh
tokens (rotating them), and records revocations. The talkie server accepts exactly the access
tokens the authorization server issued and still considers live. The end-to-end tests use the
real oidc-provider instead (tests/oauth_provider.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.stub_server import envelope, manifest_document, talkie_app

__all__ = ["Ledger", "authorization_server", "browse", "talkie_server"]

USER = {"id": "u-alice", "name": "Alice Stub", "email": "alice@example.com"}


@dataclass
class Ledger:
    """What the stub authorization server issued and was asked; switches for a test."""

    issuer: str = ""
    live_refresh: set[str] = field(default_factory=set)
    access: set[str] = field(default_factory=set)
    codes: dict[str, str] = field(default_factory=dict)
    """Authorization code -> the redirect URI it was issued for."""
    revoked: list[str] = field(default_factory=list)
    authorization_requests: list[dict[str, str]] = field(default_factory=list)
    refresh_requests: int = 0
    deny: str = ""
    """When set, the authorization request is refused with this error_description."""
    numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def issue(self) -> dict[str, Any]:
        """A fresh token response (and remember its tokens as live)."""
        number = next(self.numbers)
        access, refresh = f"at-{number}", f"rt-{number}"
        self.access.add(access)
        self.live_refresh.add(refresh)
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": refresh,
            "scope": "talkie offline_access",
        }

    def end_every_sign_in(self) -> None:
        """Revoke everything at once (an administrator ended every session)."""
        self.access.clear()
        self.live_refresh.clear()


async def _form(request: Request) -> dict[str, str]:
    pairs = parse_qs((await request.body()).decode(), keep_blank_values=True)
    return {key: values[0] for key, values in pairs.items()}


def authorization_server(ledger: Ledger) -> Starlette:
    """Metadata, authorization (an immediate redirect), token and revocation endpoints."""

    async def metadata(request: Request) -> Response:
        issuer = f"http://{request.url.netloc}"
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token",
                "revocation_endpoint": f"{issuer}/revoke",
                "code_challenge_methods_supported": ["S256"],
                "response_types_supported": ["code"],
                "authorization_response_iss_parameter_supported": True,
            }
        )

    async def authorize(request: Request) -> Response:
        params = dict(request.query_params)
        ledger.authorization_requests.append(params)
        issuer = f"http://{request.url.netloc}"
        answer = {"state": params.get("state", ""), "iss": issuer}
        if ledger.deny:
            answer |= {"error": "access_denied", "error_description": ledger.deny}
        else:
            code = f"code-{next(ledger.numbers)}"
            ledger.codes[code] = params.get("redirect_uri", "")
            answer["code"] = code
        return RedirectResponse(f"{params['redirect_uri']}?{urlencode(answer)}", status_code=302)

    async def token(request: Request) -> Response:
        form = await _form(request)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            redirect_uri = ledger.codes.pop(form.get("code", ""), None)
            if redirect_uri is None or redirect_uri != form.get("redirect_uri"):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(ledger.issue())
        if grant == "refresh_token":
            ledger.refresh_requests += 1
            given = form.get("refresh_token", "")
            if given not in ledger.live_refresh:
                return JSONResponse(
                    {"error": "invalid_grant", "error_description": "grant request is invalid"},
                    status_code=400,
                )
            ledger.live_refresh.discard(given)
            return JSONResponse(ledger.issue())
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    async def revoke(request: Request) -> Response:
        given = (await _form(request)).get("token", "")
        ledger.revoked.append(given)
        ledger.live_refresh.discard(given)
        ledger.access.discard(given)
        return Response(status_code=200)

    return Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server", metadata),
            Route("/authorize", authorize),
            Route("/token", token, methods=["POST"]),
            Route("/revoke", revoke, methods=["POST"]),
        ]
    )


def talkie_server(
    ledger: Ledger, *, name: str = "Stub CRM", token_offer: bool = False
) -> Starlette:
    """A talkie/1 server whose manifest names the stub AS and which checks its tokens."""

    def allowed(request: Request) -> bool:
        header = request.headers.get("authorization", "")
        return header.startswith("Bearer ") and header.removeprefix("Bearer ") in ledger.access

    def refused() -> Response:
        body = envelope("unauthorized", "The sign-in has expired or was revoked; sign in again.")
        return JSONResponse(body, status_code=401)

    async def status(request: Request) -> Response:
        if not allowed(request):
            return refused()
        return JSONResponse({"user": USER, "chat": True, "voice": False, "usage": []})

    async def threads(request: Request) -> Response:
        if not allowed(request):
            return refused()
        return JSONResponse({"threads": []})

    def manifest(origin: str) -> dict[str, Any]:
        auth: dict[str, Any] = {"oauth": {"issuer": ledger.issuer}}
        if token_offer:
            auth["token"] = {"hint": "Settings → Devices"}
        return manifest_document(origin, name=name, auth=auth)

    return talkie_app(
        [Route("/api/talkie/status", status), Route("/api/talkie/threads", threads)],
        manifest=manifest,
    )


async def browse(authorization_url: str) -> str:
    """Play the browser: follow the authorization URL to the redirect; its URL (not requested)."""
    async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as http:
        response = await http.get(authorization_url)
    assert response.status_code == 302, response.text
    return response.headers["location"]
