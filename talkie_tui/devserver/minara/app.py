"""The Starlette application of the reference Minara gateway."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, WebSocketRoute

from talkie_tui.devserver.common.app import api_app
from talkie_tui.devserver.common.http import CatchInternalErrors, router_errors
from talkie_tui.devserver.minara.auth import BearerAuth
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.errors import ApiError, internal_error
from talkie_tui.devserver.minara.file_routes import FILE_ROUTES
from talkie_tui.devserver.minara.routes import ROUTES
from talkie_tui.devserver.minara.services import Services
from talkie_tui.devserver.minara.socket import stream
from talkie_tui.devserver.minara.test_routes import TEST_ROUTES


def create_app(config: GatewayConfig) -> Starlette:
    """A Minara gateway for `config`; the database is opened when the app starts."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        services = Services.open(config)
        app.state.services = services
        try:
            yield
        finally:
            await services.close()

    routes: list[BaseRoute] = [*ROUTES, *FILE_ROUTES, WebSocketRoute("/v1/stream", stream)]
    if config.test_mode:
        routes.extend(TEST_ROUTES)
    return api_app(
        routes=routes,
        middleware=[
            Middleware(CatchInternalErrors, internal_error=internal_error),
            Middleware(BearerAuth, token=config.auth_token),
        ],
        api_error=ApiError,
        router_errors=router_errors(ApiError.error_response, method_code="method_not_allowed"),
        lifespan=lifespan,
    )


def stop_streams(app: Starlette) -> None:
    """Make open SSE streams end so the gateway can shut down; safe from any thread."""
    services: Services | None = getattr(app.state, "services", None)
    if services is not None:
        services.turns.request_stop()
