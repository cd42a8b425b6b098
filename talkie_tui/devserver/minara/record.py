"""An assistant row folded from the events of its turn, as a client's reducer folds them.

Because the row is built from exactly the events that were streamed, history shows what was seen
live: `content` is the concatenation of the text deltas, `metadata.segments` the ordered text,
tool, UI-block, question and interjection segments.
"""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.minara.channels import Event

QUESTION_FIELDS = ("id", "kind", "questions", "asked_by", "expires_at", "writeEndpoint")


class TurnRecord:
    """What one turn produced so far, ready to be stored as its assistant row."""

    def __init__(self) -> None:
        self.segments: list[dict[str, Any]] = []
        self.todos: list[dict[str, Any]] | None = None
        self.interrupted = False
        self.pending_interjections: list[str] = []
        self.error: dict[str, Any] | None = None
        self._texts: list[str] = []
        self._tools: dict[str, dict[str, Any]] = {}
        self._questions: dict[str, dict[str, Any]] = {}

    @property
    def content(self) -> str:
        """The turn's text: every `text_delta` in order."""
        return "".join(self._texts)

    def apply(self, event: Event) -> None:
        """Fold one `{type, data}` event in; unknown types change nothing."""
        data = event.get("data") or {}
        handler = getattr(self, f"_on_{event.get('type')}", None)
        if handler is not None:
            handler(data)

    def metadata(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The row's `metadata`: segments, and todos, interrupted, error… when there were any."""
        result: dict[str, Any] = {"segments": self.segments}
        if self.todos is not None:
            result["todos"] = self.todos
        if self.interrupted:
            result["interrupted"] = True
        if self.pending_interjections:
            result["pending_interjections"] = self.pending_interjections
        if self.error is not None:
            result["error"] = self.error
        result.update(extra or {})
        return result

    def _on_text_delta(self, data: dict[str, Any]) -> None:
        text = str(data.get("text", ""))
        self._texts.append(text)
        if self.segments and self.segments[-1]["type"] == "text":
            self.segments[-1]["text"] += text
        else:
            self.segments.append({"type": "text", "text": text})

    def _on_tool_call_start(self, data: dict[str, Any]) -> None:
        call_id = data.get("id")
        if not isinstance(call_id, str) or call_id in self._tools:
            return  # a replayed start: the card exists already
        segment: dict[str, Any] = {"type": "tool", "id": call_id, "name": data.get("name", "")}
        for name in ("label", "args"):
            if name in data:
                segment[name] = data[name]
        self._tools[call_id] = segment
        self.segments.append(segment)

    def _on_tool_call_end(self, data: dict[str, Any]) -> None:
        segment = self._tools.get(str(data.get("id")))
        if segment is None:
            return
        segment["ok"] = bool(data.get("ok"))
        for name in ("error", "summary"):
            if name in data:
                segment[name] = data[name]

    def _on_ui_block(self, data: dict[str, Any]) -> None:
        self.segments.append({"type": "ui_block", "id": data.get("id"), "block": data.get("block")})

    def _on_todos(self, data: dict[str, Any]) -> None:
        self.todos = list(data.get("items") or [])

    def _on_pending_question_added(self, data: dict[str, Any]) -> None:
        segment: dict[str, Any] = {"type": "question"}
        segment.update({name: data[name] for name in QUESTION_FIELDS if name in data})
        segment["outcome"] = None
        self._questions[str(data.get("id"))] = segment
        self.segments.append(segment)

    def _on_pending_question_resolved(self, data: dict[str, Any]) -> None:
        segment = self._questions.get(str(data.get("id")))
        if segment is not None:
            segment["outcome"] = data.get("outcome") or "answered"

    def _on_user_interjection(self, data: dict[str, Any]) -> None:
        self.segments.append({"type": "interjection", "message": data.get("message", "")})

    def _on_done(self, data: dict[str, Any]) -> None:
        self.interrupted = bool(data.get("interrupted"))
        self.pending_interjections = list(data.get("pending_interjections") or [])

    def _on_error(self, data: dict[str, Any]) -> None:
        self.error = {
            "code": data.get("code"),
            "message": data.get("message"),
            "retryable": bool(data.get("retryable", False)),
        }
