"""The demo agent's tools as voice tools (§10.2): the same answers, cards and action proposals.

A realtime model calls these by name with JSON arguments; each one rebuilds the request the
chat agent would have parsed from a typed message and runs the chat handler in a context that
collects its events instead of streaming them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ag_ui.core import BaseEvent, CustomEvent, ToolCallEndEvent

from talkie_tui.devserver.talkie import demo_answers, demo_lookups, demo_proposals, demo_request
from talkie_tui.devserver.talkie.actions import ActionService
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.run_context import RunContext

logger = logging.getLogger(__name__)

Arguments = dict[str, Any]


@dataclass(frozen=True)
class VoiceTool:
    """A tool the voice model may call, backed by a handler of the chat demo agent."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: demo_answers.Handler
    # Turns the model's arguments into the text the chat agent would have parsed.
    request_text: Callable[[Arguments], str]

    def definition(self) -> dict[str, Any]:
        """The tool as the realtime session lists it (`{type: function, name, …}`)."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }


def _schema(required: tuple[str, ...] = (), **properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            name: {"type": "string", "description": text} for name, text in properties.items()
        },
        "required": list(required),
    }


def _text(*names: str) -> Callable[[Arguments], str]:
    def build(arguments: Arguments) -> str:
        return " ".join(str(arguments[name]) for name in names if arguments.get(name))

    return build


def _note_text(arguments: Arguments) -> str:
    # The chat agent takes the note from after a colon: "Alfa: call back on Friday".
    return f"{arguments.get('company', '')}: {arguments.get('note', '')}"


VOICE_TOOLS: dict[str, VoiceTool] = {
    tool.name: tool
    for tool in (
        VoiceTool(
            "search_contacts",
            "Find a company or a person in the CRM and show their card.",
            _schema(("query",), query="a company or person name"),
            demo_lookups.lookup_answer,
            _text("query"),
        ),
        VoiceTool(
            "list_meetings",
            "List today's meetings.",
            _schema(),
            demo_answers.meetings_answer,
            lambda arguments: "today",
        ),
        VoiceTool(
            "find_offer",
            "Show an offer by its number or company, or list the open offers.",
            _schema(query="an offer number such as N-2026-014, or a company name"),
            demo_lookups.offer_answer,
            _text("query"),
        ),
        VoiceTool(
            "load_pipeline",
            "Summarise the sales pipeline.",
            _schema(),
            demo_lookups.pipeline_answer,
            lambda arguments: "pipeline",
        ),
        VoiceTool(
            "fetch_invoices",
            "List unpaid invoices.",
            _schema(),
            demo_lookups.invoices_answer,
            lambda arguments: "unpaid invoices",
        ),
        VoiceTool(
            "send_offer_email",
            "Prepare an e-mail with an offer for the user to confirm.",
            _schema(offer="the offer number", company="the company the offer is for"),
            demo_proposals.send_offer_answer,
            _text("offer", "company"),
        ),
        VoiceTool(
            "add_note",
            "Prepare a note on a company for the user to confirm.",
            _schema(("company", "note"), company="the company", note="the text of the note"),
            demo_proposals.add_note_answer,
            _note_text,
        ),
        VoiceTool(
            "delete_contact",
            "Prepare deleting a contact for the user to confirm (by button only).",
            _schema(("name",), name="the person's name"),
            demo_proposals.delete_contact_answer,
            _text("name"),
        ),
    )
}


def labels(czech: bool) -> dict[str, str]:
    """Tool name → the status label the client shows while the tool runs (§10.1 `labels`)."""
    return {name: demo_answers.tool_label(name, czech) for name in VOICE_TOOLS}


def definitions() -> list[dict[str, Any]]:
    """The tool definitions a voice session is locked to."""
    return [tool.definition() for tool in VOICE_TOOLS.values()]


@dataclass
class VoiceToolResult:
    """What a voice tool produced: the model's output text, client events, stored cards."""

    ok: bool
    output: str
    events: list[dict[str, Any]]
    cards: list[dict[str, Any]]
    actions: list[dict[str, Any]]


class VoiceToolContext(RunContext):
    """A run context for one voice tool call: text is collected, not streamed, and not paced."""

    def __init__(self, *, call_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._call_id = call_id

    def new_tool_call_id(self) -> str:
        """The provider's call id, so a proposed action names the call that made it."""
        return self._call_id

    async def say(
        self, text: str, *, delay: float | None = None, pieces: list[str] | None = None
    ) -> None:
        """Keep the text for the model's output; the model speaks it, nothing is streamed."""
        self.check_cancelled()
        self.text_parts.append(text)


def _consent_hint(action: dict[str, Any], czech: bool) -> str:
    keyword = (action["confirm"].get("voice") or {}).get("keyword")
    if czech:
        yes = f"ano, {keyword}" if keyword else "ano"
        return f"Pro potvrzení řekněte „{yes}“, pro zrušení „ne“."
    yes = f"yes, {keyword}" if keyword else "yes"
    return f"To confirm, say “{yes}”; to cancel, say “no”."


async def run_voice_tool(
    tool: VoiceTool,
    arguments: Arguments,
    *,
    call_id: str,
    thread_id: str,
    user_id: str,
    locale: str,
    config: ServerConfig,
    actions: ActionService,
) -> VoiceToolResult:
    """Run one voice tool call in the voice session's thread."""
    emitted: list[BaseEvent] = []
    czech = locale == "cs"
    text = tool.request_text(arguments)
    ctx = VoiceToolContext(
        call_id=call_id,
        run_id=call_id,
        thread_id=thread_id,
        user_id=user_id,
        user_text=text,
        config=config,
        actions=actions,
        emit=emitted.append,
        cancelled=asyncio.Event(),
    )
    ctx.locale = locale
    # The session's language wins over the language guessed from the (short) arguments.
    request = dataclasses.replace(demo_request.parse(text), czech=czech)
    try:
        await tool.handler(ctx, request)
    except Exception:
        logger.exception("voice tool %s failed", tool.name)
        failed = "Nástroj selhal." if czech else "The tool failed."
        return VoiceToolResult(False, failed, [], [], [])
    ok = all(
        (event.metadata or {}).get("ok", True)
        for event in emitted
        if isinstance(event, ToolCallEndEvent)
    )
    events = [
        event.model_dump(by_alias=True, mode="json", exclude_none=True)
        for event in emitted
        if isinstance(event, CustomEvent)
    ]
    proposed = [event["value"] for event in events if event["name"] == "talkie.action"]
    output = ctx.content
    for action in proposed:
        if "voice" in action["confirm"]["methods"]:
            output = f"{output}\n\n{_consent_hint(action, czech)}"
    return VoiceToolResult(ok, output, events, list(ctx.cards), proposed)
