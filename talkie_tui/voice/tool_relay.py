"""The tools of a voice call (§10.2): what the provider asks for runs on the Talkie server.

A `ToolRelay` runs each function call once (the provider may announce one twice), reports its
start and its end as `ToolStarted`/`ToolFinished` with the AG-UI events the server answered
(cards, actions), and hands back what goes to the model and the actions it proposed. What
happens next (the output to the provider, a consent window, the next answer) is `VoiceCall`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from talkie_tui.core.errors import ConflictError, TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import ActionProposed, EventDecoder
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.protocol.talkie.voice_models import VoiceSession
from talkie_tui.voice.call_updates import CallUpdate, ToolFinished, ToolStarted
from talkie_tui.voice.realtime import FunctionCall

__all__ = ["MAX_TOOL_ERROR", "ToolOutcome", "ToolRelay"]

MAX_TOOL_ERROR = 300  # characters of a failed tool's output shown to the person


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What a relayed tool gives the call: the output for the model and the proposed actions."""

    output: str
    """Passed to the model unchanged (§10.2), or the error the server gave."""
    proposed: list[Action] = field(default_factory=list)


class ToolRelay:
    """Runs the provider's function calls on the Talkie server, each call id once."""

    def __init__(self, client: TalkieClient, *, notify: Callable[[CallUpdate], None]) -> None:
        self._client = client
        self._notify = notify
        self._seen: set[str] = set()

    def first_time(self, call_id: str) -> bool:
        """Whether this call id is new (the provider announces a call twice); marks it seen."""
        if call_id in self._seen:
            return False  # arguments.done and output_item.done
        self._seen.add(call_id)
        return True

    async def run(self, session: VoiceSession, call: FunctionCall) -> ToolOutcome | None:
        """Run one call on the server; None when the server had relayed this call id already."""
        label = session.labels.get(call.name) or _("Running {tool}…").format(tool=call.name)
        self._notify(ToolStarted(call.call_id, call.name, label))
        try:
            result = await self._client.voice_tool(session, call.name, call.call_id, call.arguments)
        except ConflictError:
            self._notify(ToolFinished(call.call_id))  # §10.2: this callId was already relayed
            return None
        except TalkieError as error:
            self._notify(ToolFinished(call.call_id, error=error.message))
            return ToolOutcome(f"Error: {error.message}")
        decoder = EventDecoder()
        events = [decoded for raw in result.events for decoded in decoder.decode_object(raw)]
        # A tool the server ran but that failed: say so (its words, cleaned), not nothing.
        failure = None
        if not result.ok:
            failure = clean_text(result.output)[:MAX_TOOL_ERROR] or _("The tool failed.")
        self._notify(ToolFinished(call.call_id, events, error=failure))
        proposed = [event.action for event in events if isinstance(event, ActionProposed)]
        return ToolOutcome(result.output, proposed)
