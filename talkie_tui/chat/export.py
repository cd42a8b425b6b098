"""A conversation as a Markdown document, for `Export thread`."""

from __future__ import annotations

from talkie_tui.i18n import _, pgettext

from .conversation import Conversation
from .turns import ActionPart, CardPart, LinkPart, NoticePart, TextPart, ToolPart

__all__ = ["conversation_markdown"]


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def _tool_outcome(part: ToolPart) -> str:
    if part.state == "ok":
        return pgettext("export", "done")
    if part.state == "failed":
        return pgettext("export", "failed: {error}").format(error=part.error)
    return pgettext("export", "running")


def conversation_markdown(conversation: Conversation, server_name: str) -> str:
    """Every turn with its text, tools, cards (as their fallback text), actions and links."""
    lines = [f"# {server_name}", ""]
    if conversation.thread_id:
        lines += [_("Thread `{id}`").format(id=conversation.thread_id), ""]
    for turn in conversation.turns:
        when = f" · {turn.created_at:%Y-%m-%d %H:%M}" if turn.created_at else ""
        who = pgettext("export", "You") if turn.role == "user" else pgettext("export", "Agent")
        lines += [f"## {who}{when}", ""]
        for part in turn.parts:
            if isinstance(part, TextPart):
                lines += [part.text, ""]
            elif isinstance(part, ToolPart):
                lines += [f"*{part.label}* ({_tool_outcome(part)})", ""]
            elif isinstance(part, CardPart):
                lines += [_quote(f"**{part.card.title}**\n{part.card.fallback_text}"), ""]
            elif isinstance(part, ActionPart):
                action = part.action
                risk = _("risk {level}").format(level=action.risk_level)
                lines += [f"- [{action.status}] {action.summary} ({risk})", ""]
            elif isinstance(part, LinkPart):
                lines += [f"[{part.link.label or part.link.url}]({part.link.url})", ""]
            elif isinstance(part, NoticePart):
                error = part.level == "error"
                level = pgettext("export", "error") if error else pgettext("export", "warning")
                lines += [f"*{level}: {part.text}*", ""]
    return "\n".join(lines).rstrip() + "\n"
