"""The hub checks of credentials and bodies: who may call what, JSON only, the body cap, the
error envelope."""

from __future__ import annotations

from talkie_tui.conformance.cuckoo.hub import Party, Throwaway
from talkie_tui.conformance.cuckoo.hub_checks import limits
from talkie_tui.conformance.cuckoo.hub_checks.base import (
    ENVELOPE_RULE,
    SPEC,
    HubSession,
    check,
    check_with_agent,
    expect_error,
)
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show


@check("healthz", section="(notes/cuckoo.md: public routes)")
async def healthz(session: HubSession) -> None:
    """GET /healthz answers 200 without credentials."""
    answer = await session.hub.request("GET", "/healthz")
    if answer.status != 200:
        raise CheckFailed(f"GET /healthz answered {answer.describe()}")


@check_with_agent("credentials", section="Authentication")
async def credentials(session: HubSession, made: Throwaway) -> None:
    """The agent API wants the binding secret (else 401), which unlocks /v1/agent only."""
    hub = session.hub
    rule = f'{SPEC}: "401 The credential is missing or wrong"'
    for party, what in (
        (Party("nobody", {}), "without a credential"),
        (Party.agent("bnd_sec_" + "0" * 52), "with a wrong secret"),
    ):
        answer = await hub.request("GET", "/v1/agent/me", party)
        answer.expect_refused(f"GET /v1/agent/me {what}", rule, status=401)
        expect_error(answer, 401, None, f"GET /v1/agent/me {what}")
    me = await hub.ok("GET", "/v1/agent/me", made.agent, "GET /v1/agent/me with the secret")
    if not isinstance(me, dict) or (me.get("agent") or {}).get("id") != made.agent_id:
        raise CheckFailed(f"GET /v1/agent/me answered {show(me)}, not this binding's agent")
    answer = await hub.request("GET", "/v1/client/me", made.agent)
    if answer.status not in (401, 403):
        raise CheckFailed(
            f"GET /v1/client/me with a binding secret answered {answer.describe()}; {SPEC}: "
            '"bnd_sec_ — A running backend — /v1/agent only"'
        )


@check("json-only", section="Authentication")
async def json_only(session: HubSession) -> None:
    """A body that is not JSON → 422, never 400."""
    answer = await session.agent_sends(
        content=b"text=hello", content_type="application/x-www-form-urlencoded"
    )
    if answer.status == 201:
        raise CheckFailed(
            f'a form-encoded send was accepted; {SPEC}: "Request bodies must be JSON."'
        )
    expect_error(answer, 422, None, "a form-encoded send")


@check("unknown-fields", section="Authentication")
async def unknown_fields(session: HubSession) -> None:
    """A body with an unknown field → 422 unknown_field naming it."""
    answer = await session.agent_sends(json_body={"text": "hi", "txet": "hi"})
    rule = (
        f'{SPEC}: "Unknown fields are rejected, so a typo in a field name is an error rather '
        'than a silent no-op."'
    )
    answer.expect_refused("a send with the unknown field txet", rule)
    error = expect_error(answer, 422, "unknown_field", "a send with the unknown field txet")
    if error.get("field") != "txet":
        raise CheckFailed(
            f'error.field is {show(error.get("field"))}, not "txet" (the field at fault)'
        )


@check("body-cap", section="Authentication; Errors")
async def body_cap(session: HubSession) -> None:
    """A body over 1 MiB → 422 body_too_large (there is no 413)."""
    body = b'{"text": "' + b"a" * (limits.MIB + 16) + b'"}'
    answer = await session.agent_sends(content=body, content_type="application/json")
    answer.expect_refused("a body over 1 MiB", f'{SPEC}: "Bodies are capped at 1 MiB."')
    expect_error(answer, 422, "body_too_large", "a body over 1 MiB")


@check_with_agent("error-envelope", section="Errors")
async def error_envelope(session: HubSession, made: Throwaway) -> None:
    """An unknown conversation → 404 in the error envelope with a request_id."""
    unknown = "cnv_" + "0" * 26
    answer = await session.hub.request("GET", f"/v1/agent/conversations/{unknown}", made.agent)
    error = expect_error(answer, 404, None, "an unknown conversation")
    if not isinstance(error.get("request_id"), str) or not error["request_id"]:
        raise CheckFailed(f"the error has no request_id; {ENVELOPE_RULE}")


@check("scopes", section="Authentication")
async def scopes(session: HubSession) -> None:
    """An API key (mgt_tok_) unlocks /v1/mgmt only, not /v1/client."""
    hub = session.hub
    made = await hub.request(
        "POST", "/v1/client/api-keys", session.owner, json_body={"name": "conformance"}
    )
    data = made.json()
    if (
        made.status not in (200, 201)
        or not isinstance(data, dict)
        or not str(data.get("key", "")).startswith("mgt_tok_")
    ):
        raise CheckSkipped(
            f"no API key to try (POST /v1/client/api-keys answered {made.describe()})"
        )
    key = Party("api key", {"Authorization": f"Bearer {data['key']}"})
    rule = f'{SPEC}: "mgt_tok_ — A server, as an API key — /v1/mgmt only"'
    listed = await hub.request("GET", "/v1/mgmt/agents", key)
    if listed.status != 200:
        raise CheckFailed(
            f"GET /v1/mgmt/agents with an API key answered {listed.describe()}; {rule}"
        )
    me = await hub.request("GET", "/v1/client/me", key)
    if me.status not in (401, 403):
        raise CheckFailed(f"GET /v1/client/me with an API key answered {me.describe()}; {rule}")
    key_id = (data.get("api_key") or {}).get("id")
    if key_id:
        await hub.request("DELETE", f"/v1/client/api-keys/{key_id}", session.owner)
