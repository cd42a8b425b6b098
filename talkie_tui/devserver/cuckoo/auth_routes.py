"""`/v1/auth`: e-mail-code sign-in (the code goes to the log in dev mode) and sign-out."""

from __future__ import annotations

import hmac
import logging
import secrets

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.cuckoo import ids, shapes
from talkie_tui.devserver.cuckoo.bodies import one_line, opt_str, req_str
from talkie_tui.devserver.cuckoo.errors import ApiError, invalid
from talkie_tui.devserver.cuckoo.principals import principal_of
from talkie_tui.devserver.cuckoo.routing import hub_of, no_content, read_json

logger = logging.getLogger(__name__)
EMAIL_CHARS = 320
DEVICE_NAME_CHARS = 80


def _email(raw: str) -> str:
    email = raw.strip().lower()
    local, at, domain = email.partition("@")
    if not at or not local or "." not in domain or len(email) > EMAIL_CHARS or " " in email:
        raise invalid("invalid_email", "That is not an e-mail address.", "email")
    return email


async def start(request: Request) -> Response:
    """POST /v1/auth/email/start {email} → 204, the same whether or not an account exists."""
    hub = hub_of(request)
    body = await read_json(request, {"email"})
    email = _email(req_str(body, "email", "invalid_email"))
    wait = hub.limiter.take("code", email, hub.config.code_rate)
    if wait > 0:
        seconds = str(max(1, int(wait + 0.999)))
        raise ApiError(
            429,
            "too_many_codes",
            "Too many codes; wait a little.",
            headers={"Retry-After": seconds},
        )
    code = f"{secrets.randbelow(1_000_000):06d}"
    hub.storage.put_code(
        email, ids.secret_hash(code), clock.iso(clock.later(hub.config.code_seconds))
    )
    if hub.config.dev:
        logger.warning("cuckoo hub: sign-in code for %s is %s", email, code)
    if hub.config.code_sink is not None:
        hub.config.code_sink(email, code)
    return no_content()


async def verify(request: Request) -> JSONResponse:
    """POST /v1/auth/email/verify {email, code, device_name?} → a session token."""
    hub = hub_of(request)
    body = await read_json(request, {"email", "code", "device_name"})
    email = _email(req_str(body, "email", "invalid_email"))
    code = req_str(body, "code", "invalid_code")
    device = opt_str(body, "device_name", "invalid_device_name")
    device = (
        one_line(device, "device_name", "invalid_device_name", 1, DEVICE_NAME_CHARS)
        if device
        else "Device"
    )
    pending = hub.storage.get_code(email)
    now = clock.now()
    wrong = ApiError(401, "invalid_code", "The code is wrong, used or expired.")
    if pending is None or clock.parse_iso(pending["expires_at"]) <= now:
        raise wrong
    if not hmac.compare_digest(pending["code_hash"], ids.secret_hash(code.strip())):
        hub.storage.count_code_attempt(email)
        if pending["attempts"] + 1 >= hub.config.code_attempts:
            hub.storage.drop_code(email)
        raise wrong
    hub.storage.drop_code(email)
    user = hub.storage.user_by_email(email)
    is_new = user is None
    if user is None:
        user = hub.storage.create_user(
            ids.new_id("usr"), email, email.partition("@")[0], clock.iso(now)
        )
    token = ids.new_secret(ids.SESSION_TOKEN)
    session = {
        "id": ids.new_id("ses"),
        "user_id": user["id"],
        "token_hash": ids.secret_hash(token),
        "name": device,
        "created_at": clock.iso(now),
        "last_seen_at": clock.iso(now),
        "expires_at": clock.iso(clock.later(hub.config.session_seconds, now)),
    }
    signed_out = hub.storage.create_session(session, hub.config.max_devices)
    await hub.feeds.end_sessions(user["id"], signed_out)
    return JSONResponse(
        {
            "token": token,
            "session": {"id": session["id"], "expires_at": session["expires_at"]},
            "user": shapes.user_json(user),
            "is_new": is_new,
        }
    )


async def logout(request: Request) -> Response:
    """POST /v1/auth/logout → 204 (the dev header has no session: 422 `no_session`)."""
    principal = principal_of(request)
    if principal.session_id is None or principal.user_id is None:
        raise invalid("no_session", "This request is not signed in with a session.")
    hub = hub_of(request)
    hub.storage.delete_session(principal.user_id, principal.session_id)
    await hub.feeds.end_sessions(principal.user_id, [principal.session_id])
    return no_content()


AUTH_ROUTES = [
    Route("/v1/auth/email/start", start, methods=["POST"]),
    Route("/v1/auth/email/verify", verify, methods=["POST"]),
    Route("/v1/auth/logout", logout, methods=["POST"]),
]
