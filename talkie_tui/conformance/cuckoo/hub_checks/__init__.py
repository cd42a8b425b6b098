"""The Cuckoo hub checks, in the order they run: each drives the hub from outside, as a person,
an owner and an agent would, and names the rule of `cuckoo-agent.md` it found broken.

The checks live by topic; their run order (the reports' order) is the one below: the spec's
reading order, then the checks added later.
"""

from __future__ import annotations

from talkie_tui.conformance.cuckoo.hub_checks import (
    access,
    catch_up,
    media,
    sending,
    sockets,
    webhooks,
)
from talkie_tui.conformance.cuckoo.hub_checks.base import REGISTRY, HubSession

__all__ = ["CHECKS", "HubSession"]

CHECKS = REGISTRY.in_order(
    [
        access.healthz,
        access.credentials,
        access.json_only,
        access.unknown_fields,
        access.body_cap,
        access.error_envelope,
        sockets.socket_push,
        sockets.ack,
        sockets.redelivery,
        sockets.one_socket,
        sending.idempotency,
        sending.streaming,
        sending.buttons,
        catch_up.events_catch_up,
        sockets.replaced_binding,
        sending.text_clamp,
        sending.reply_and_quick_replies,
        sending.typing,
        webhooks.webhook_signing,
        webhooks.webhook_redirects,
        access.scopes,
        sockets.frame_cap,
        sockets.socket_pings,
        sockets.socket_ping_timeout,
        sending.stop,
        media.media_kind,
        media.attachments,
        sending.idle_truncation,
        sockets.push_backlog,
        catch_up.events_paging,
        sending.typing_expiry,
        media.media_limits,
        webhooks.webhook_retries,
    ]
)
