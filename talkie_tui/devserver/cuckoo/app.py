"""The Starlette application of the reference Cuckoo hub."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route, WebSocketRoute

from talkie_tui.devserver.common.app import api_app
from talkie_tui.devserver.common.http import CatchInternalErrors, router_errors
from talkie_tui.devserver.cuckoo.agent_routes import AGENT_ROUTES
from talkie_tui.devserver.cuckoo.agent_socket import agent_socket
from talkie_tui.devserver.cuckoo.auth_routes import AUTH_ROUTES
from talkie_tui.devserver.cuckoo.client_routes import CLIENT_ROUTES
from talkie_tui.devserver.cuckoo.client_socket import client_socket
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.contact_routes import CONTACT_ROUTES
from talkie_tui.devserver.cuckoo.errors import ApiError, RequestIds, error_response, internal_error
from talkie_tui.devserver.cuckoo.hiding_routes import HIDING_ROUTES
from talkie_tui.devserver.cuckoo.media_routes import MEDIA_ROUTES
from talkie_tui.devserver.cuckoo.mgmt_routes import MGMT_ROUTES
from talkie_tui.devserver.cuckoo.pairing_routes import PAIRING_ROUTES
from talkie_tui.devserver.cuckoo.principals import HubAuth
from talkie_tui.devserver.cuckoo.schedule_routes import SCHEDULE_ROUTES
from talkie_tui.devserver.cuckoo.services import Hub


async def healthz(request: Request) -> JSONResponse:
    """GET /healthz (no credential)"""
    return JSONResponse({"ok": True})


def create_app(config: HubConfig) -> Starlette:
    """A Cuckoo hub for `config`; the database is opened when the app starts."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub = Hub(config)
        app.state.hub = hub
        hub.start()
        try:
            yield
        finally:
            await hub.close()

    # The router tries routes in order: the client and agent APIs, where every message
    # passes, come first (each group has its own path prefix, so the order changes no match).
    routes: list[BaseRoute] = [
        *CLIENT_ROUTES,
        *AGENT_ROUTES,
        Route("/healthz", healthz, methods=["GET"]),
        *AUTH_ROUTES,
        *MGMT_ROUTES,
        *MEDIA_ROUTES,
        *PAIRING_ROUTES,
        *CONTACT_ROUTES,
        *HIDING_ROUTES,
        *SCHEDULE_ROUTES,
        WebSocketRoute("/v1/client/socket", client_socket),
        WebSocketRoute("/v1/agent/socket", agent_socket),
    ]
    return api_app(
        routes=routes,
        middleware=[
            Middleware(RequestIds),
            Middleware(CatchInternalErrors, internal_error=internal_error),
            Middleware(HubAuth),
        ],
        api_error=ApiError,
        router_errors=router_errors(
            error_response,
            method_code="method_not_allowed",
            method_status=422,
            not_found_code="route_not_found",
        ),
        lifespan=lifespan,
    )


def stop_streams(app: Starlette) -> None:
    """Close the hub's sockets so it can shut down (agents hear 1012); safe from any thread."""
    hub: Hub | None = getattr(app.state, "hub", None)
    if hub is not None:
        loop = hub.loop
        if loop is not None:
            loop.call_soon_threadsafe(hub.stop_sockets)
