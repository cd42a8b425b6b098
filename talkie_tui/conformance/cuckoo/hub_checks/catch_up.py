"""The hub checks of catching up over HTTP: `/v1/agent/events` in order, with since= and limit."""

from __future__ import annotations

from talkie_tui.conformance.cuckoo.hub import Throwaway
from talkie_tui.conformance.cuckoo.hub_checks import limits
from talkie_tui.conformance.cuckoo.hub_checks.base import (
    SPEC,
    HubSession,
    check_with_agent,
    expect_error,
)
from talkie_tui.conformance.report import CheckFailed, show


@check_with_agent("events-catch-up", section="Catching up over HTTP")
async def events_catch_up(session: HubSession, made: Throwaway) -> None:
    """GET /v1/agent/events?since= returns the later events, oldest first."""
    for text in ("one", "two", "three"):
        await made.say(session.hub, text)
    everything = await session.hub.ok("GET", "/v1/agent/events", made.agent, "GET /v1/agent/events")
    events = everything.get("events") if isinstance(everything, dict) else None
    if not isinstance(events, list) or len(events) < 3:
        raise CheckFailed(f"GET /v1/agent/events answered {show(everything, 120)}")
    texts = [
        ((e.get("data") or {}).get("message") or {}).get("body", {}).get("text")
        for e in events
        if e.get("type") == "message.created"
    ]
    if texts[-3:] != ["one", "two", "three"]:
        raise CheckFailed(
            f'the events come as {show(texts)}; {SPEC}: "returns events in order, oldest first"'
        )
    since = events[0]["id"]
    later = await session.hub.ok(
        "GET",
        "/v1/agent/events",
        made.agent,
        "GET /v1/agent/events?since=",
        params={"since": since},
    )
    ids = [e.get("id") for e in later.get("events", [])]
    if ids != [e["id"] for e in events[1:]]:
        raise CheckFailed(f"?since={since} answered {show(ids)}, not the events after it")


PAGE_RULE = f'{SPEC}: "returns events in order, oldest first, up to 100 at a time"'


async def all_events(
    session: HubSession, made: Throwaway, page: int = limits.PAGE_READ
) -> list[str]:
    """The ids of every event of `made`'s agent, by `/events` pages of `page` with since=."""
    ids: list[str] = []
    params = {"limit": str(page)}
    while True:
        answer = await session.hub.ok(
            "GET", "/v1/agent/events", made.agent, "GET /v1/agent/events", params=params
        )
        events = answer.get("events") if isinstance(answer, dict) else None
        if not isinstance(events, list):
            raise CheckFailed(f"GET /v1/agent/events answered {show(answer, 120)}")
        if len(events) > page:
            raise CheckFailed(
                f"GET /v1/agent/events?limit={page} answered {len(events)} events; {PAGE_RULE}"
            )
        ids += [str(event.get("id")) for event in events]
        if not events or len(ids) > 10 * limits.PAGE_MAX:  # a hub that ignores since= ends here
            return ids
        params = {"limit": str(page), "since": ids[-1]}


@check_with_agent("events-paging", section="Catching up over HTTP")
async def events_paging(session: HubSession, made: Throwaway) -> None:
    """GET /v1/agent/events pages with limit and since: no gap, no repeat, at most 100."""
    for text in ("one", "two", "three", "four"):
        await made.say(session.hub, text)
    everything = await all_events(session, made)
    paged = await all_events(session, made, page=2)
    if paged != everything:
        raise CheckFailed(
            f"paging by two with since= gave {show(paged, 120)}, the whole list is "
            f"{show(everything, 120)}; {PAGE_RULE}"
        )
    path, limit = "/v1/agent/events", limits.PAGE_MAX * 10
    answer = await session.hub.request("GET", path, made.agent, params={"limit": str(limit)})
    if answer.status != 200:
        expect_error(answer, 422, None, f"{path}?limit={limit}")
    elif len((answer.json() or {}).get("events", [])) > limits.PAGE_MAX:
        raise CheckFailed(
            f"{path}?limit={limit} answered more than {limits.PAGE_MAX} events; {PAGE_RULE}"
        )
