"""Who is asking: a session (`ses_tok_`), an API key (`mgt_tok_`), a binding (`bnd_sec_`) or, in
dev mode, the `X-Dev-User` header; and which credential each part of the API accepts.

ses_tok_ unlocks /v1/client and /v1/mgmt, mgt_tok_ /v1/mgmt only, bnd_sec_ /v1/agent only.
A WebSocket refused here gets the error as an HTTP answer before the upgrade.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.common.http import bearer_token
from talkie_tui.devserver.cuckoo import ids
from talkie_tui.devserver.cuckoo.errors import ApiError

if TYPE_CHECKING:
    from talkie_tui.devserver.cuckoo.services import Hub

DEV_HEADER = "x-dev-user"


@dataclass(frozen=True)
class Principal:
    """The caller: a person (by session, API key or dev header) or an agent (by binding)."""

    kind: str  # "user" or "agent"
    user_id: str | None = None
    session_id: str | None = None
    session_expires_at: str | None = None
    via_api_key: bool = False
    agent_id: str | None = None
    binding_id: str | None = None
    binding_mode: str | None = None


def _unauthorized(code: str, message: str) -> ApiError:
    return ApiError(401, code, message, headers={"WWW-Authenticate": "Bearer"})


def resolve(hub: Hub, connection: HTTPConnection) -> Principal:
    """The principal of a request, or 401 `missing_credentials` / `invalid_credentials`
    (the agent socket answers a revoked or replaced binding with 403 `no_binding`)."""
    dev_user = connection.headers.get(DEV_HEADER)
    if hub.config.dev and dev_user is not None:
        if not ids.is_id(dev_user, "usr"):
            raise ApiError(422, "invalid_id", "X-Dev-User must be a user id (usr_…).")
        hub.storage.ensure_user(dev_user, f"Dev {dev_user[-6:]}", lambda: clock.iso(clock.now()))
        return Principal(kind="user", user_id=dev_user)
    token = bearer_token(connection.headers.get("authorization")) or _subprotocol_token(connection)
    if token is None:
        raise _unauthorized("missing_credentials", "Send `Authorization: Bearer <token>`.")
    digest = ids.secret_hash(token)
    if token.startswith(ids.SESSION_TOKEN):
        session = hub.storage.session_by_hash(digest, clock.iso(clock.now()))
        if session is not None:
            return Principal(
                kind="user",
                user_id=session["user_id"],
                session_id=session["id"],
                session_expires_at=session["expires_at"],
            )
    elif token.startswith(ids.API_KEY):
        key = hub.storage.api_key_by_hash(digest)
        if key is not None:
            return Principal(kind="user", user_id=key["user_id"], via_api_key=True)
    elif token.startswith(ids.BINDING_SECRET):
        binding = hub.storage.binding_by_hash(digest)
        if binding is not None and binding["revoked_at"] is not None:
            if connection.url.path == "/v1/agent/socket":
                raise ApiError(403, "no_binding", "This agent has no such binding any more.")
        elif binding is not None:
            return Principal(
                kind="agent",
                agent_id=binding["agent_id"],
                binding_id=binding["id"],
                binding_mode=binding["mode"],
            )
    raise _unauthorized("invalid_credentials", "The credential is not valid.")


def _subprotocol_token(connection: HTTPConnection) -> str | None:
    """The token a browser's socket offers as `Sec-WebSocket-Protocol: cuckoo, <token>`."""
    offered = [
        part.strip() for part in connection.headers.get("sec-websocket-protocol", "").split(",")
    ]
    if len(offered) == 2 and offered[0] == "cuckoo" and offered[1]:
        return offered[1]
    return None


def check_scope(principal: Principal, path: str) -> None:
    """403 when the credential does not unlock this part of the API."""
    if path.startswith("/v1/agent/"):
        if principal.kind != "agent":
            raise ApiError(403, "agent_required", "This needs a binding secret (bnd_sec_…).")
        return
    if principal.kind != "user":
        raise ApiError(403, "user_required", "This needs a person's credential.")
    if principal.via_api_key and not path.startswith("/v1/mgmt/"):
        raise ApiError(403, "user_required", "An API key unlocks /v1/mgmt only.")


def needs_credentials(path: str) -> bool:
    """Whether a path is behind a credential."""
    return path.startswith(("/v1/client/", "/v1/mgmt/", "/v1/agent/")) or path in (
        "/v1/client",
        "/v1/mgmt",
        "/v1/agent",
        "/v1/auth/logout",
    )


class HubAuth:
    """ASGI middleware: resolve the caller of a protected path into `scope["state"]`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let through open paths; answer 401/403 for the others or record the principal."""
        path: str = scope.get("path", "")
        if scope["type"] not in ("http", "websocket") or not needs_credentials(path):
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        hub: Hub = connection.app.state.hub
        try:
            principal = resolve(hub, connection)
            check_scope(principal, path if path.endswith("/") else path + "/")
        except ApiError as error:
            if scope["type"] == "websocket":
                await WebSocket(scope, receive, send).send_denial_response(error.response())
            else:
                await error.response()(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


def principal_of(connection: HTTPConnection) -> Principal:
    """The principal `HubAuth` recorded for this request."""
    principal: Principal = connection.state.principal
    return principal


def user_of(connection: HTTPConnection) -> str:
    """The person making this request."""
    user_id = principal_of(connection).user_id
    assert user_id is not None
    return user_id


def agent_of(connection: HTTPConnection) -> str:
    """The agent making this request."""
    agent_id = principal_of(connection).agent_id
    assert agent_id is not None
    return agent_id
