"""A conversation as a Markdown document, for `Export thread`."""

from __future__ import annotations

from .reducer import Conversation
from .turns import ActionPart, CardPart, LinkPart, NoticePart, TextPart, ToolPart

__all__ = ["conversation_markdown"]


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def conversation_markdown(conversation: Conversation, server_name: str) -> str:
    """Every turn with its text, tools, cards (as their fallback text), actions and links."""
    lines = [f"# {server_name}", ""]
    if conversation.thread_id:
        lines += [f"Thread `{conversation.thread_id}`", ""]
    for turn in conversation.turns:
        when = f" · {turn.created_at:%Y-%m-%d %H:%M}" if turn.created_at else ""
        lines += [f"## {'You' if turn.role == 'user' else 'Agent'}{when}", ""]
        for part in turn.parts:
            if isinstance(part, TextPart):
                lines += [part.text, ""]
            elif isinstance(part, ToolPart):
                outcome = {"ok": "done", "failed": f"failed: {part.error}"}.get(part.state, "")
                lines += [f"*{part.label}* ({outcome or part.state})", ""]
            elif isinstance(part, CardPart):
                lines += [_quote(f"**{part.card.title}**\n{part.card.fallback_text}"), ""]
            elif isinstance(part, ActionPart):
                action = part.action
                lines += [f"- [{action.status}] {action.summary} (risk {action.risk_level})", ""]
            elif isinstance(part, LinkPart):
                lines += [f"[{part.link.label or part.link.url}]({part.link.url})", ""]
            elif isinstance(part, NoticePart):
                lines += [f"*{part.level}: {part.text}*", ""]
    return "\n".join(lines).rstrip() + "\n"
