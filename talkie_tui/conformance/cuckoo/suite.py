"""The Cuckoo hub suite: a person (a session token, or a development hub's `X-Dev-User`) who
may create throwaway agents; their bindings are removed at the end."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from talkie_tui.config import hub_token
from talkie_tui.conformance.cuckoo.hub import Hub, Party
from talkie_tui.conformance.cuckoo.hub_checks import CHECKS, HubSession
from talkie_tui.conformance.opening import first_answer, opened
from talkie_tui.conformance.report import CheckFailed
from talkie_tui.conformance.suite import Started, Suite, Target, Unreachable
from talkie_tui.protocol.cuckoo.client import hub_base

__all__ = ["SUITE"]


@asynccontextmanager
async def start(target: Target) -> AsyncIterator[Started[HubSession]]:
    """The hub, once `GET /v1/client/me` takes the person; Unreachable otherwise."""
    token = hub_token(target.token)
    async with opened(target, hub_base) as (base, http):
        hub = Hub(base, http)
        owner, person = Party.person(token), Party.person(token)
        me = await first_answer(hub.request("GET", "/v1/client/me", owner))
        if me.status != 200:
            raise Unreachable(
                f"GET /v1/client/me answered {me.describe()}: a hub needs a person, the session of "
                "`talkie login HUB` (--token or CUCKOO_TOKEN), or a development hub"
            )
        session = HubSession(hub, owner, person)
        try:
            yield Started(session, hub.base)
        finally:
            for made in session.made:  # the throwaway agents lose their bindings
                with contextlib.suppress(CheckFailed):
                    await hub.request("DELETE", f"/v1/mgmt/agents/{made.agent_id}/binding", owner)


SUITE = Suite("cuckoo hub", CHECKS, start)
