"""The Minara gateway checks, in the order they run: agent-independent, each names its rule.

A real gateway runs a real model, so no check depends on what the agent says: only on the
shape and order of what the gateway sends, and on what it stores and refuses. The checks live
by topic; their run order (the reports' order) is the one below.
"""

from __future__ import annotations

from talkie_tui.conformance.minara.checks import access, history, interruptions, payloads, turns
from talkie_tui.conformance.minara.checks.base import REGISTRY

__all__ = ["CHECKS"]

CHECKS = REGISTRY.in_order(
    [
        access.healthz,
        access.auth_http,
        access.auth_socket,
        turns.turn_accepted,
        turns.turn_replay,
        turns.seq_rules,
        turns.turn_end,
        turns.resume,
        turns.first_seq,
        history.history,
        history.sessions_list,
        history.search,
        interruptions.interaction_not_pending,
        interruptions.interject_idle,
        interruptions.interrupt,
        payloads.attachment_limits,
        payloads.models,
        payloads.error_bodies,
        payloads.unknown_fields,
    ]
)
