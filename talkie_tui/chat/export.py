"""A conversation as a Markdown document, for `Export thread`."""

from __future__ import annotations

from collections.abc import Sequence

from talkie_tui.chat.block_text import attachment_words, question_outcome, todo_heading
from talkie_tui.chat.cells import cell_text
from talkie_tui.chat.charts import no_data, read_series
from talkie_tui.chat.columns import Columns, kv_columns, table_columns
from talkie_tui.chat.conversation import Conversation
from talkie_tui.chat.turns import (
    ActionPart,
    AttachmentPart,
    CardPart,
    InterjectionPart,
    LinkPart,
    NoticePart,
    Part,
    QuestionPart,
    TextPart,
    TodoPart,
    ToolPart,
    UiBlockPart,
)
from talkie_tui.i18n import _, pgettext

__all__ = ["conversation_markdown"]


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def _tool_outcome(part: ToolPart) -> str:
    if part.state == "ok":
        return pgettext("export", "done")
    if part.state == "failed":
        return pgettext("export", "failed: {error}").format(error=part.error)
    return pgettext("export", "running")


def _cell(text: str) -> str:
    """A table cell's text: a `|` would end the cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> str:
    """A Markdown (GFM) table, numeric columns right-aligned."""
    lines = ["| " + " | ".join(_cell(title) for title in header) + " |"]
    lines.append("| " + " | ".join("---:" if r else "---" for r in right) + " |")
    lines += ["| " + " | ".join(_cell(text) for text in row) + " |" for row in rows]
    return "\n".join(lines)


def _columns_table(columns: Columns, header: Sequence[str] | None = None) -> str:
    titles = header or columns.header or [""] * columns.column_count
    return _table(titles, columns.cells(), columns.numeric())


def _chart(data: dict[str, object]) -> str:
    """A chart as a table of its points: one row per x label, one column per series."""
    title = cell_text(data.get("title"))
    heading = f"**{title}**\n\n" if title else ""
    series = read_series(data)
    if not series:
        return heading + f"*{no_data()}*"
    xs = list(dict.fromkeys(x for s in series for x, _y in s.points))
    values = [{x: cell_text(y) for x, y in s.points} for s in series]
    rows = [[x] + [points.get(x, "") for points in values] for x in xs]
    return heading + _table([""] + [s.label for s in series], rows, [False] + [True] * len(series))


def _link(label: str | None, url: str) -> str:
    """A Markdown link; its text escaped, its address in <> when it holds spaces or parens."""
    text = (label or url).replace("[", "\\[").replace("]", "\\]")
    target = f"<{url}>" if any(char in url for char in " ()<>") else url
    return f"[{text}]({target})"


def _block(part: UiBlockPart) -> str:
    data = part.data
    if part.kind == "markdown":
        return str(data.get("text", ""))
    if part.kind == "table":
        return _columns_table(table_columns(data))
    if part.kind == "kv":
        header = [pgettext("export", "Field"), pgettext("export", "Value")]
        return _columns_table(kv_columns(data), header)
    if part.kind == "link":
        return _link(str(data.get("label") or ""), str(data.get("url", "")))
    if part.kind == "chart":
        return _chart(data)
    fallback = data.get("fallback_text")
    return fallback if isinstance(fallback, str) else ""


def _todos(part: TodoPart) -> str:
    lines = [f"*{todo_heading(part.items)}*", ""]
    lines += [f"- [{'x' if done else ' '}] {text}" for text, done in part.items]
    return "\n".join(lines)


def _question(part: QuestionPart) -> str:
    """The question, its options and how it ended (a secret's value is never in the model)."""
    lines = [f"**{_('The agent asks')}** ({part.kind})"]
    for question in part.questions:
        lines.append(question.text)
        for option in question.options:
            about = f" — {option.description}" if option.description else ""
            lines.append(f"- {option.label}{about}")
    lines += ["", f"*{question_outcome(part.outcome, part.answered_with)}*"]
    return _quote("\n".join(lines))


def _part(part: Part) -> str:
    """One part of a turn in Markdown ("" for nothing to show)."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, ToolPart):
        return f"*{part.label}* ({_tool_outcome(part)})"
    if isinstance(part, CardPart):
        return _quote(f"**{part.card.title}**\n{part.card.fallback_text}")
    if isinstance(part, ActionPart):
        action = part.action
        risk = _("risk {level}").format(level=action.risk_level)
        return f"- [{action.status}] {action.summary} ({risk})"
    if isinstance(part, LinkPart):
        return _link(part.link.label, part.link.url)
    if isinstance(part, NoticePart):
        error = part.level == "error"
        level = pgettext("export", "error") if error else pgettext("export", "warning")
        return f"*{level}: {part.text}*"
    if isinstance(part, UiBlockPart):
        return _block(part)
    if isinstance(part, TodoPart):
        return _todos(part) if part.items else ""
    if isinstance(part, QuestionPart):
        return _question(part)
    if isinstance(part, InterjectionPart):
        return f"*{_('You, while the agent worked')}:* {part.text}"
    if isinstance(part, AttachmentPart):
        kind, size = attachment_words(part.kind, part.size)
        return f"📎 {part.filename} ({kind}, {size})"
    return ""


def conversation_markdown(conversation: Conversation, server_name: str) -> str:
    """Every turn with its text, tools, cards (as their fallback text), actions, links, UI
    blocks (tables as tables, charts as a table of their points), todos, questions with their
    outcome, interjections and attachments."""
    lines = [f"# {server_name}", ""]
    if conversation.thread_id:
        lines += [_("Thread `{id}`").format(id=conversation.thread_id), ""]
    for turn in conversation.turns:
        when = f" · {turn.created_at:%Y-%m-%d %H:%M}" if turn.created_at else ""
        who = (
            pgettext("export", "You")
            if turn.role == "user"
            else turn.author or pgettext("export", "Agent")
        )
        lines += [f"## {who}{when}", ""]
        for part in turn.parts:
            text = _part(part)
            if text:
                lines += [text, ""]
    return "\n".join(lines).rstrip() + "\n"
