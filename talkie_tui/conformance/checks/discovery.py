"""The talkie/1 checks of discovery, status and errors (§1, §3, §4, test mode)."""

from __future__ import annotations

import json
import uuid

from talkie_tui.conformance.checks.base import SPEC, TEST, Session, check
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, fail_all, show
from talkie_tui.conformance.wire import expect_error
from talkie_tui.protocol.talkie.run_request import RunRequest

REQUIRED_ENDPOINTS = ("status", "run", "cancelRun", "threads", "thread", "action", "decision")


@check("discovery", section="§1", needs_test_mode=False)
async def discovery(session: Session) -> None:
    """The manifest: spec, issuer, serverId, same-origin endpoints, a sign-in offer."""
    server = session.client.server
    manifest = server.manifest
    problems = []
    if manifest.spec != SPEC:
        problems.append(f'spec is {show(manifest.spec, 30)}, not "{SPEC}"')
    if manifest.issuer != server.origin:
        problems.append(f"issuer {show(manifest.issuer)} is not the origin {server.origin}")
    if not manifest.server_id.strip():
        problems.append("serverId is blank")
    missing = [name for name in REQUIRED_ENDPOINTS if name not in manifest.endpoints]
    if missing:
        problems.append(f"endpoints missing: {', '.join(missing)}")
    for name, origin in sorted(server.foreign_endpoints.items()):
        problems.append(f"endpoint {show(name, 30)} is on another origin ({show(origin)})")
    if manifest.auth.oauth is None and manifest.auth.token is None:
        problems.append("auth offers neither oauth nor token")
    fail_all(problems)


@check("test-mode", section="§11", needs_test_mode=False)
async def test_mode(session: Session) -> None:
    """The manifest says testMode: true, so fixtures make the destructive checks safe."""
    if not session.manifest.test_mode:
        raise CheckFailed(
            "the manifest does not say testMode: true; conformance needs a server in test mode "
            "(§11), so the checks that send talkie-test: messages or decide actions are skipped"
        )


@check("status", section="§4", needs_test_mode=False)
async def status(session: Session) -> None:
    """GET status answers a readable Status."""
    await session.client.status()


@check("error-not-found", section="§3", needs_test_mode=False)
async def error_not_found(session: Session) -> None:
    """An unknown thread or action → 404 not_found envelope."""
    unknown = f"conformance-unknown-{uuid.uuid4().hex}"
    for endpoint, param in (("thread", "threadId"), ("action", "actionId")):
        answer = await session.wire.request("GET", endpoint, {param: unknown})
        expect_error(answer, 404, "not_found", f"GET {endpoint} of an unknown id")


# A body that is not JSON, and JSON whose `messages` is not a list.
_MALFORMED_RUN_BODIES = (
    b'{"threadId": "t_conformance", "messages": [',
    json.dumps(
        {"threadId": "t_conformance", "runId": "r_conformance", "messages": "not a list"}
    ).encode(),
)


@check("error-invalid-request", section="§3", needs_test_mode=False)
async def error_invalid_request(session: Session) -> None:
    """A malformed run body → 400 invalid_request envelope, before any stream."""
    for body in _MALFORMED_RUN_BODIES:
        answer = await session.wire.request("POST", "run", content=body, event_stream=True)
        expect_error(answer, 400, "invalid_request", f"POST run with {show(body.decode(), 40)}")


@check("error-unauthorized", section="§2.2, §3", needs_test_mode=False)
async def error_unauthorized(session: Session) -> None:
    """Without the bearer token → 401 unauthorized envelope (status and run)."""
    auth = session.manifest.auth
    if auth.oauth is None and auth.token is None:
        raise CheckSkipped("the manifest offers no sign-in, so no token is required")
    if not session.wire.token:
        raise CheckSkipped("no token given (--token), so a request without one proves nothing")
    answer = await session.wire.request("GET", "status", auth=False)
    expect_error(answer, 401, "unauthorized", "GET status without a token")
    run = RunRequest(f"{TEST}echo unauthorized")
    answer = await session.wire.request(
        "POST", "run", content=run.body(), auth=False, event_stream=True
    )
    expect_error(answer, 401, "unauthorized", "POST run without a token")
