"""The Cuckoo hub suite: the reference hub (development mode, nothing signed in) passes it, and
each deliberately broken hub (hub_proxy.py) fails exactly the checks of its rule.

One hub serves every breakage (each check makes agents of its own), with a 2 s lease and a 1 s
idle stream limit, and the proxies ping their sockets every second (3 s for the answer), so the
slow checks (redelivery, idle truncation, the pings) run here too. The hub and the breakages are
served from child processes (child_servers.py), the checks run here.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from talkie_tui.conformance.cuckoo.hub_checks import CHECKS
from talkie_tui.conformance.cuckoo.hub_checks import limits as hub_limits
from talkie_tui.conformance.runner import Selection, run_conformance
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.runner import serve_in_thread
from tests.conformance.breakages import Outcome, assert_fails_exactly, conform, run_all
from tests.conformance.child_servers import proxies, served_in_child
from tests.conformance.hub_proxy import BREAKAGES, PING, PONG, HubProxy, StallsAfterALease

LEASE = 2.0
IDLE = 1.0
LEASE_BATCH = StallsAfterALease.lease
IMAGE_MAX = 64 * 1024
RETRIES = (0.5, 1.0, 2.0)


def _ping_as_the_test_hubs(patch: pytest.MonkeyPatch) -> None:
    """The checks expect pings as the test hubs send them, not every 30 s answered in 15."""
    patch.setattr(hub_limits, "PING_INTERVAL", PING)
    patch.setattr(hub_limits, "PONG_WAIT", PONG)


@contextmanager
def _reference_hub(db: Path) -> Iterator[dict[str, str]]:
    """The reference hub with a 2 s lease and a 1 s idle limit."""
    config = HubConfig(
        db_path=db,
        dev=True,
        lease_seconds=LEASE,
        stream_idle_seconds=IDLE,
        stream_sweep_interval=0.2,
        lease_batch=LEASE_BATCH,
        image_max_bytes=IMAGE_MAX,
        webhook_retry_seconds=(*RETRIES, 600.0),
    )
    with serve_in_thread(config) as upstream:
        yield {"hub": upstream}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Each breakage's conformance outcome, all at once in front of one reference hub."""
    db = tmp_path_factory.mktemp("hub-conformance") / "hub.sqlite3"
    with (
        served_in_child(functools.partial(_reference_hub, db)) as upstream,
        served_in_child(proxies(upstream["hub"], BREAKAGES)) as urls,
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setattr(hub_limits, "LEASE", LEASE)  # the spec's 30 s, as this hub leases
        patch.setattr(hub_limits, "IDLE", IDLE)  # the spec's 30 s, as this hub truncates
        patch.setattr(hub_limits, "LEASE_BATCH", LEASE_BATCH)  # the spec's 100
        patch.setattr(hub_limits, "IMAGE_MAX", IMAGE_MAX)  # the spec's 16 MiB
        patch.setattr(hub_limits, "RETRIES", RETRIES)  # the spec's 1, 5 and 30 s
        _ping_as_the_test_hubs(patch)
        # Forced: a hub whose /healthz is broken is not recognised as a hub (no-healthz).
        runs = {
            name: functools.partial(conform, url, protocol="cuckoo") for name, url in urls.items()
        }
        results = run_all(runs)
    # Out of the patch: the other tests of the module meet hubs of the spec's numbers.
    yield results


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: b.name)
def test_the_broken_rule_and_only_it_fails(
    outcomes: dict[str, Outcome], breakage: type[HubProxy]
) -> None:
    outcome = outcomes[breakage.name]
    assert_fails_exactly(outcome, breakage.fails, CHECKS)
    assert outcome.lines[-1].startswith("cuckoo hub conformance of ")


def test_reasons_quote_the_spec(outcomes: dict[str, Outcome]) -> None:
    expected = {
        "redelivers-nothing": "becomes due again and is sent again",
        "accepts-typos": "a typo in a field name is an error rather than a silent no-op",
        "errors-as-400": "There is no 400 and no 413",
        "sends-twice": "200 when an idempotency_key matched an earlier send",
        "two-sockets": "the older one is closed with code 4001",
        "appends-after-finish": "is 409 not_streaming",
        "taps-twice": "a button cannot be taken twice",
        "no-request-id": '"request_id"',
        "newest-first": "oldest first",
        "keeps-replaced-sockets": "closes with 4002",
        "no-clamp": "clamped and also marked truncated",
        "seven-quick-replies": "up to six plain labels",
        "typing-answers-json": "which returns 204",
        "unsigned-webhooks": "X-Cuckoo-Signature",
        "follows-redirects": "Redirects are not followed and count as a failure.",
        "keys-open-everything": "/v1/mgmt only",
        "huge-frames": "Frames are capped at 64 KiB.",
        "stop-ignored": "later appends get 409 stopped",
        "kind-from-name": "The kind is decided from the bytes",
        "eleven-files": "At most ten files per message",
        "no-idle-truncation": "idle for 30 seconds is finished by the hub and marked truncated",
        "no-healthz": "GET /healthz answered HTTP 401",
        "secrets-open-client": "/v1/agent only",
        "bare-events": "Every event has the same envelope.",
        "impatient-retries": "retried after 1 second, then 5 seconds, 30 seconds",
        "stalls-after-a-lease": "The hub leases up to 100 events at a time.",
        "unbounded-pages": "up to 100 at a time",
        "typing-never-expires": "A start expires by itself after 10 seconds.",
        "big-files-413": "an oversized file is 422 file_too_large",
        "no-pings": "The server pings every 30 seconds and expects an answer within 15.",
        "keeps-silent-sockets": "pings went unanswered",
    }
    for name, words in expected.items():
        assert words in outcomes[name].output, (name, outcomes[name].output)


async def test_the_reference_hub_pings_and_lets_a_silent_socket_go(
    cuckoo_hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The breakages' sockets end at their proxies, which ping on their own: here the hub's
    # pings (uvicorn's, as HubConfig sets them) reach the checks themselves.
    _ping_as_the_test_hubs(monkeypatch)
    url = cuckoo_hub(ping_interval=PING, pong_timeout=PONG)
    out = io.StringIO()
    only = Selection(only=frozenset({"socket-pings", "socket-ping-timeout"}))
    code = await run_conformance(url, protocol="cuckoo", out=out, selection=only)
    assert code == 0, out.getvalue()
    assert out.getvalue().splitlines()[:2] == ["PASS socket-pings", "PASS socket-ping-timeout"]


async def test_a_hub_that_wants_a_person_is_told_so(cuckoo_hub) -> None:
    out = io.StringIO()
    code = await run_conformance(cuckoo_hub(dev=False), protocol="cuckoo", out=out)
    assert code == 1
    first = out.getvalue().splitlines()[0]
    assert first.startswith("FAIL healthz: GET /v1/client/me answered HTTP 401")
    assert "talkie login HUB" in first


async def test_a_production_hub_is_checked_as_the_signed_in_person(cuckoo_hub) -> None:
    codes: dict[str, str] = {}
    url = cuckoo_hub(dev=False, code_sink=codes.__setitem__)
    async with httpx.AsyncClient(base_url=url, trust_env=False) as http:
        await http.post("/v1/auth/email/start", json={"email": "owner@example.com"})
        verified = await http.post(
            "/v1/auth/email/verify",
            json={"email": "owner@example.com", "code": codes["owner@example.com"]},
        )
        token = verified.json()["token"]
        out = io.StringIO()
        code = await run_conformance(url, token=token, out=out, selection=Selection(quick=True))
        assert code == 0, out.getvalue()
        assert (
            "SKIP webhook-signing: the hub refused a webhook binding to 127.0.0.1" in out.getvalue()
        )
        agents = (
            await http.get("/v1/mgmt/agents", headers={"Authorization": f"Bearer {token}"})
        ).json()
        for agent in agents["agents"]:  # the throwaway agents lost their bindings at the end
            binding = await http.get(
                f"/v1/mgmt/agents/{agent['id']}/binding",
                headers={"Authorization": f"Bearer {token}"},
            )
            assert binding.json()["binding"] is None, binding.text
