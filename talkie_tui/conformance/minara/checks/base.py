"""What the Minara checks share: their registry, the specs they quote, the error body."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from talkie_tui.conformance.http import error_object
from talkie_tui.conformance.minara.session import Session
from talkie_tui.conformance.report import CheckFailed, show
from talkie_tui.conformance.suite import Registry
from talkie_tui.conformance.wire import Answer

REGISTRY: Registry[Session] = Registry()


CHAT = "minara-chat.md"
STREAM = "minara-stream.md"
POLL = 0.25
ERROR_RULE = (
    f'{STREAM}: "Errors everywhere: {{ "error": {{ "code", "message" }} }} with 400, 401, 404, '
    '409, 413, 429"'
)


def check(
    name: str, *, section: str, timeout: float = 30.0, slow: bool = False
) -> Callable[[Callable[[Session], Awaitable[None]]], Callable[[Session], Awaitable[None]]]:
    """Register a Minara check under `name`; the package orders them."""
    return REGISTRY.check(name, section=section, timeout=timeout, slow=slow)


def expect_error(answer: Answer, status: int, what: str) -> None:
    """Require this status and the documented error body `{error: {code, message}}`."""
    error_object(answer, status, what, ERROR_RULE)


def expect_refusal(
    answer: Answer, status: int, what: str, rule: str, *, asked: str | None = None
) -> None:
    """Require this status (else fail quoting the spec's `rule` about the request `asked`,
    `what` unless given) and the documented error body."""
    if answer.status != status:
        raise CheckFailed(f"{asked or what} answered {answer.describe()}; {rule}")
    expect_error(answer, status, what)


async def sessions_total(session: Session) -> int:
    """How many sessions the gateway lists (`total` of GET /v1/sessions)."""
    data = await session.wire.json("GET", "/v1/sessions", "GET /v1/sessions", params={"limit": 1})
    total = data.get("total")
    if type(total) is not int:
        raise CheckFailed(f"GET /v1/sessions: total is {show(total)}, not an integer")
    return total
