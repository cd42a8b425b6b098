"""The Starlette application of the talkie/1 reference server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware

from talkie_tui.devserver.common.app import api_app
from talkie_tui.devserver.common.http import CatchInternalErrors, router_errors
from talkie_tui.devserver.talkie.auth import BearerAuth, OAuthIntrospection
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.errors import ApiError, internal_error
from talkie_tui.devserver.talkie.routes import ROUTES
from talkie_tui.devserver.talkie.services import Services
from talkie_tui.devserver.talkie.voice_routes import VOICE_ROUTES


def create_app(config: ServerConfig) -> Starlette:
    """A talkie/1 server for `config`; the database is opened when the app starts."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        services = Services.open(config)
        app.state.services = services
        try:
            await services.start_voice()
            yield
        finally:
            await services.close()

    return api_app(
        routes=[*ROUTES, *VOICE_ROUTES],
        middleware=[
            Middleware(CatchInternalErrors, internal_error=internal_error),
            Middleware(
                BearerAuth, token=config.dev_token, oauth=OAuthIntrospection.from_config(config)
            ),
        ],
        api_error=ApiError,
        router_errors=router_errors(ApiError.error_response, method_code="invalid_request"),
        lifespan=lifespan,
    )


def stop_streams(app: Starlette) -> None:
    """Make open event streams end so the server can shut down; safe from any thread."""
    services: Services | None = getattr(app.state, "services", None)
    if services is not None:
        services.runs.request_stop()
