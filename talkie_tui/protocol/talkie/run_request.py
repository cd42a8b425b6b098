"""A talkie/1 run request: one user message with the ids its retries reuse (§5)."""

from __future__ import annotations

import uuid

import ag_ui.core as agui


def new_id(prefix: str) -> str:
    """A fresh client-side id such as `m_3f2a…` (threads, runs, messages)."""
    return f"{prefix}_{uuid.uuid4().hex}"


class RunRequest:
    """One user message on its way to the server; retries reuse its ids (§5 idempotency)."""

    def __init__(
        self,
        text: str,
        *,
        thread_id: str | None = None,
        message_id: str | None = None,
        run_id: str | None = None,
        channel: str = "chat",
    ) -> None:
        self.text = text
        self.thread_id = thread_id or new_id("t")
        self.message_id = message_id or new_id("m")
        self.run_id = run_id or new_id("r")
        self.channel = channel
        self.finished = False
        self.error: agui.RunErrorEvent | None = None
        self.truncated: str | None = None
        # The client closed the stream itself over what the server sent (see StreamTruncated).
        self.abandoned = False

    @property
    def settled(self) -> bool:
        """True once the run finished or failed: there is nothing left to re-send."""
        return self.finished or self.error is not None

    def body(self) -> bytes:
        """The AG-UI RunAgentInput body."""
        run_input = agui.RunAgentInput(
            thread_id=self.thread_id,
            run_id=self.run_id,
            messages=[agui.UserMessage(id=self.message_id, content=self.text)],
            tools=[],
            context=[],
            state={},
            forwarded_props={"talkie": {"channel": self.channel}},
            protocol_version=agui.PROTOCOL_VERSION,
        )
        return run_input.model_dump_json(by_alias=True, exclude_none=True).encode()
