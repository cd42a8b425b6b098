"""What the "user" says to the fake provider, and how the "model" reacts to each sentence.

The provider hears real audio but cannot understand it: each utterance it detects takes the
next line of a script as its final transcript. A line may make the model call a tool (whose
output it then reads out) or reply with fixed words.

A script is a JSON list of lines; a line is a string (the user's words) or an object
`{"user": "...", "tool": "search_contacts", "arguments": {...}, "reply": "..."}`. A script file
holds such a list, `{"utterances": [...]}`, or per-locale lists `{"cs": [...], "en": [...]}`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Line:
    """One user utterance and what the model does after hearing it."""

    user: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    # What the model says: after the tool's output when there is a tool. None: read the tool's
    # output, or a short acknowledgement.
    reply: str | None = None


class ScriptError(ValueError):
    """A script that cannot be used; the message says what is wrong."""


def parse_lines(data: Any) -> list[Line]:
    """Lines from the JSON form (a list of strings or line objects)."""
    if not isinstance(data, list):
        raise ScriptError("a script is a list of utterances")
    lines = []
    for index, item in enumerate(data):
        if isinstance(item, str):
            item = {"user": item}
        if not isinstance(item, dict):
            raise ScriptError(f"utterance {index} is neither a string nor an object")
        user, tool = item.get("user"), item.get("tool")
        arguments, reply = item.get("arguments", {}), item.get("reply")
        if not isinstance(user, str) or not user.strip():
            raise ScriptError(f"utterance {index} has no `user` text")
        if tool is not None and not isinstance(tool, str):
            raise ScriptError(f"utterance {index}: `tool` must be a tool name")
        if not isinstance(arguments, dict):
            raise ScriptError(f"utterance {index}: `arguments` must be an object")
        if reply is not None and not isinstance(reply, str):
            raise ScriptError(f"utterance {index}: `reply` must be text")
        lines.append(Line(user.strip(), tool or None, arguments, reply))
    return lines


def load_script_file(path: Path) -> dict[str, list[Line]]:
    """Lines per locale from a script file; key `*` applies to every locale."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScriptError(f"cannot read the voice script {path}: {exc}") from exc
    if isinstance(data, dict) and "utterances" in data:
        data = data["utterances"]
    if isinstance(data, list):
        return {"*": parse_lines(data)}
    if isinstance(data, dict):
        return {str(locale): parse_lines(lines) for locale, lines in data.items()}
    raise ScriptError(f"the voice script {path} is neither a list nor an object")


# The scenario of `talkie demo`: a customer lookup (a card), an offer e-mail (an action the
# user may confirm by voice: "yes" plus the action's keyword "send"), and goodbye. The replies
# say briefly what the tools returned, as a model would. It is data in a script file's form.
DEMO_LINES: dict[str, list[Line]] = load_script_file(Path(__file__).with_name("demo_script.json"))

# Heard after the script ran out: honest about being a fixed scenario.
FALLBACK: dict[str, Line] = {
    "cs": Line(
        "(mimo scénář)",
        reply="Jsem ukázka s pevným scénářem a ten už skončil. Další dotazy pište do chatu.",
    ),
    "en": Line(
        "(off script)",
        reply="I'm a demo with a fixed script, and it has ended. Please ask more in the chat.",
    ),
}


class Script:
    """The lines still to be heard in one voice session; replaceable while a call runs."""

    def __init__(self, lines: list[Line], locale: str) -> None:
        self._lines = deque(lines)
        self.locale = locale
        self._lock = threading.Lock()

    def replace(self, lines: list[Line]) -> None:
        """Drop the remaining lines and use these instead."""
        with self._lock:
            self._lines = deque(lines)

    def next_line(self) -> Line:
        """The next line, or the fallback once the script ran out."""
        with self._lock:
            if self._lines:
                return self._lines.popleft()
        return FALLBACK.get(self.locale, FALLBACK["en"])

    def __len__(self) -> int:
        return len(self._lines)


def default_lines(configured: dict[str, list[Line]] | None, locale: str) -> list[Line]:
    """The lines a new session starts with: the configured ones, else the demo scenario."""
    if configured is not None:
        chosen = configured.get(locale, configured.get("*"))
        if chosen is not None:
            return list(chosen)
    return list(DEMO_LINES.get(locale, DEMO_LINES["en"]))
