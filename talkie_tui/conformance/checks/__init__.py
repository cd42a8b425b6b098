"""The talkie/1 conformance checks, in the order they run; each raises to fail or skip.

A check is an async function of the `Session`. It returns to pass, raises `CheckFailed` with one
sentence naming the broken rule, or `CheckSkipped` when it cannot be run against this server.
Checks that send `talkie-test:` messages or decide actions need `testMode: true` (§1, §11).
The checks live by section of the spec; their run order (the reports' order) is the one below.
"""

from __future__ import annotations

from talkie_tui.conformance.checks import decisions, discovery, runs, scripted
from talkie_tui.conformance.checks.base import REGISTRY, Session
from talkie_tui.conformance.suite import Check

__all__ = ["CHECKS", "Check", "Session"]

CHECKS: list[Check[Session]] = REGISTRY.in_order(
    [
        discovery.discovery,
        discovery.test_mode,
        discovery.status,
        discovery.error_not_found,
        discovery.error_invalid_request,
        discovery.error_unauthorized,
        scripted.echo,
        scripted.card,
        scripted.action,
        scripted.run_error,
        scripted.slow,
        decisions.decision_repeat,
        decisions.decision_conflict,
        decisions.decision_stale,
        decisions.decision_expired,
        runs.idempotent_retry,
        runs.cancel,
        runs.cancel_ended,
        runs.disconnect,
    ]
)
