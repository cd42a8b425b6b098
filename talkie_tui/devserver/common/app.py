"""What the reference servers' Starlette apps share: errors answered in each server's envelope,
and no redirects."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.routing import BaseRoute
from starlette.types import ExceptionHandler

from talkie_tui.devserver.common.http import answer_api_error


def api_app(
    *,
    routes: Sequence[BaseRoute],
    middleware: Sequence[Middleware],
    api_error: type[Exception],
    router_errors: ExceptionHandler,
    lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]],
) -> Starlette:
    """A server's app: its `api_error`s and the router's own errors (`router_errors`) answered
    as its envelopes."""
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={api_error: answer_api_error, HTTPException: router_errors},
        lifespan=lifespan,
    )
    # A trailing slash gets a 404 envelope, not a redirect (clients follow no redirects).
    app.router.redirect_slashes = False
    return app
