"""The hub checks of webhook delivery: the signed post, no redirects, the retries."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid

from talkie_tui.conformance.cuckoo.hub import Throwaway, make_throwaway
from talkie_tui.conformance.cuckoo.hub_checks import limits
from talkie_tui.conformance.cuckoo.hub_checks.base import SPEC, HubSession, check
from talkie_tui.conformance.cuckoo.receiver import Post, Receiver, webhook_signature
from talkie_tui.conformance.local_server import serve_local
from talkie_tui.conformance.report import CheckFailed, CheckSkipped, show

WEBHOOK_HEADERS = (
    "x-cuckoo-event",
    "x-cuckoo-event-id",
    "x-cuckoo-timestamp",
    "x-cuckoo-signature",
)


async def _webhook_posts(
    session: HubSession, receiver: Receiver, *, wanted: int = 1, wait: float = limits.WEBHOOK_WAIT
) -> tuple[Throwaway, list[Post]]:
    """A throwaway agent on a webhook binding to `receiver`, a person's message, and the posts
    the hub made (at least `wanted` of one event, within the wait)."""
    async with serve_local(receiver.app()) as origin:
        try:
            made = await make_throwaway(
                session.hub,
                session.owner,
                session.person,
                mode="webhook",
                webhook_url=f"{origin}/hook",
            )
        except CheckFailed as failure:
            raise CheckSkipped(
                f"the hub refused a webhook binding to 127.0.0.1 ({failure}); a production hub "
                "wants a public https address"
            ) from None
        session.made.append(made)
        await made.say(session.hub, f"webhook {uuid.uuid4().hex[:8]}")
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            # The first event posted, posted `wanted` times (a retry, after a redirect).
            first = receiver.posts[0].headers.get("x-cuckoo-event-id", "") if receiver.posts else ""
            if first and len(receiver.of(first)) >= wanted:
                break
            await asyncio.sleep(0.1)
        return made, list(receiver.posts)


@check("webhook-signing", section="Webhook transport")
async def webhook_signing(session: HubSession) -> None:
    """Each webhook post carries the four headers and the HMAC of timestamp and body."""
    made, posts = await _webhook_posts(session, Receiver())
    if not posts:
        raise CheckFailed(f"the hub posted nothing to the webhook within {limits.WEBHOOK_WAIT:g} s")
    for post in posts:
        missing = [name for name in WEBHOOK_HEADERS if not post.headers.get(name)]
        if missing:
            raise CheckFailed(
                f'a webhook post lacks {", ".join(missing)}; {SPEC}: "X-Cuckoo-Event, '
                'X-Cuckoo-Event-Id, X-Cuckoo-Timestamp, X-Cuckoo-Signature"'
            )
        event = json.loads(post.body)
        if (event.get("type"), event.get("id")) != (
            post.headers["x-cuckoo-event"],
            post.headers["x-cuckoo-event-id"],
        ):
            raise CheckFailed("X-Cuckoo-Event and X-Cuckoo-Event-Id do not name the posted event")
        timestamp = post.headers["x-cuckoo-timestamp"]
        if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > limits.CLOCK_SKEW:
            raise CheckFailed(f"X-Cuckoo-Timestamp is {show(timestamp)}, not the seconds of now")
        if post.headers["x-cuckoo-signature"] != webhook_signature(
            made.secret, timestamp, post.body
        ):
            raise CheckFailed(
                f'X-Cuckoo-Signature does not verify; {SPEC}: "The signature is HMAC-SHA256 over '
                'timestamp + "." + body. The key is the SHA-256 of your binding secret"'
            )


@check("webhook-redirects", section="Webhook transport; Delivery")
async def webhook_redirects(session: HubSession) -> None:
    """A redirect is not followed: it counts as a failure, and the post comes again."""
    receiver = Receiver(redirect_first=True)
    await _webhook_posts(session, receiver, wanted=2)
    rule = (
        f'{SPEC}: "Redirects are not followed and count as a failure." … "A failed delivery is '
        'retried after 1 second"'
    )
    if receiver.elsewhere:
        raise CheckFailed(f"the hub followed a 307 to /elsewhere; {rule}")
    if not receiver.posts:
        raise CheckFailed(f"the hub posted nothing to the webhook within {limits.WEBHOOK_WAIT:g} s")
    first = receiver.posts[0].headers.get("x-cuckoo-event-id", "")
    if len(receiver.of(first)) < 2:
        raise CheckFailed(
            f"the redirected post of {first} did not come again within "
            f"{limits.WEBHOOK_WAIT:g} s; {rule}"
        )


@check(
    "webhook-retries",
    section="Delivery",
    timeout=sum(limits.RETRIES) * 1.5 + 30.0,
    slow=True,
)
async def webhook_retries(session: HubSession) -> None:
    """A failing webhook is retried after 1 s, then 5 s, then 30 s."""
    receiver = Receiver(fail_first=len(limits.RETRIES))
    wait = sum(limits.RETRIES) * 1.5 + 10.0
    await _webhook_posts(session, receiver, wanted=len(limits.RETRIES) + 1, wait=wait)
    rule = (
        f'{SPEC}: "A failed delivery is retried after 1 second, then 5 seconds, 30 seconds, 2 '
        'minutes, 10 minutes, and hourly after that."'
    )
    if not receiver.posts:
        raise CheckFailed(f"the hub posted nothing to the webhook within {limits.WEBHOOK_WAIT:g} s")
    first = receiver.posts[0].headers.get("x-cuckoo-event-id", "")
    times = [post.at for post in receiver.of(first)]
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    if len(gaps) < len(limits.RETRIES):
        raise CheckFailed(
            f"the event was posted {len(times)} times within {wait:g} s, failing each time; {rule}"
        )
    for gap, expected in zip(gaps, limits.RETRIES, strict=False):
        if not expected * 0.8 - 0.2 <= gap <= expected * 1.5 + 2.0:
            shown = ", ".join(f"{g:.1f}" for g in gaps[: len(limits.RETRIES)])
            raise CheckFailed(f"the retries came after {shown} s; {rule}")
