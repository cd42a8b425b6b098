"""The body of a talkie/1 run (AG-UI's RunAgentInput) with one user message, as the yardstick
clients of the benchmarks write it: standard library only, so it costs them no start-up."""

from __future__ import annotations

import uuid
from typing import Any


def run_body(text: str) -> dict[str, Any]:
    """A new thread's run carrying `text` as the user's message."""
    return {
        "threadId": f"t_{uuid.uuid4().hex}",
        "runId": f"r_{uuid.uuid4().hex}",
        "messages": [{"id": f"m_{uuid.uuid4().hex}", "role": "user", "content": text}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
