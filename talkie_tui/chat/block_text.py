"""The Minara parts as plain text: blocks, links, todos, questions and attachments, shared by
the TUI's widgets, `talkie ask` and the export.

Server text is already cleaned by the reducer; these functions only place it. Cell widths
(`cells`), aligned columns (`columns`) and charts (`charts`) have their own modules; their
names are imported from here too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from talkie_tui.chat.cells import cell_len, cell_text, clip, fit, is_number, set_cell_size
from talkie_tui.chat.charts import (
    MAX_COLUMN,
    MAX_SERIES,
    Series,
    SparkLine,
    Sparklines,
    chart_lines,
    compact_number,
    more_series,
    no_data,
    read_series,
    resample,
    sparklines,
    x_range,
)
from talkie_tui.chat.columns import (
    GAP,
    MIN_COLUMN,
    ColumnLayout,
    ColumnLine,
    Columns,
    kv_columns,
    layout_columns,
    table_columns,
)
from talkie_tui.i18n import _, pgettext

__all__ = [
    "GAP",
    "MAX_COLUMN",
    "MAX_SERIES",
    "MIN_COLUMN",
    "TODO_DONE",
    "TODO_OPEN",
    "ColumnLayout",
    "ColumnLine",
    "Columns",
    "Series",
    "SparkLine",
    "Sparklines",
    "attachment_words",
    "block_lines",
    "cell_len",
    "cell_text",
    "chart_lines",
    "clip",
    "compact_number",
    "fit",
    "human_size",
    "is_number",
    "kv_columns",
    "layout_columns",
    "link_line",
    "more_series",
    "no_data",
    "question_outcome",
    "read_series",
    "resample",
    "set_cell_size",
    "sparklines",
    "table_columns",
    "todo_heading",
    "todo_lines",
    "x_range",
]


def link_line(label: str | None, url: str) -> str:
    """A link as "label: url" (the URL alone stays readable and can be copied)."""
    return f"{label or _('Link')}: {url}"


def _field(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def block_lines(kind: str, data: dict[str, Any], width: int) -> list[str]:
    """A UI block as lines of plain text at most `width` cells wide (Markdown as written)."""
    if kind == "markdown":
        return _field(data, "text").splitlines()
    if kind in ("table", "kv"):
        columns = table_columns(data) if kind == "table" else kv_columns(data)
        return [line.text.rstrip() for line in columns.lines(width)]
    if kind == "link":
        return [link_line(_field(data, "label"), _field(data, "url"))]
    if kind == "chart":
        return chart_lines(data, width)
    fallback = _field(data, "fallback_text")
    return fallback.splitlines() if fallback else []


TODO_DONE, TODO_OPEN = "☑", "☐"  # the boxes of a checklist, as the TUI draws them


def todo_heading(items: Sequence[tuple[str, bool]]) -> str:
    """ "To do · 1 of 3 done"."""
    done = sum(1 for _text, is_done in items if is_done)
    return _("To do · {done} of {total} done").format(done=done, total=len(items))


def todo_lines(items: Sequence[tuple[str, bool]]) -> list[str]:
    """A todo list as a checklist: its heading, then ☐ / ☑ and each item's text."""
    return [todo_heading(items)] + [
        f"{TODO_DONE if done else TODO_OPEN} {text}" for text, done in items
    ]


_OUTCOMES: dict[str, Callable[[], str]] = {
    "answered": lambda: pgettext("question", "Answered"),
    "elsewhere": lambda: pgettext("question", "Answered elsewhere"),
    "timeout": lambda: pgettext("question", "Timed out"),
    "cancelled": lambda: pgettext("question", "Cancelled"),
}


def question_outcome(outcome: str | None, answered_with: str | None = None) -> str:
    """How a question ended, in words ("Open" while it waits), with the answer given here."""
    if outcome is None:
        return pgettext("question", "Open")
    words = _OUTCOMES.get(outcome)
    said = words() if words is not None else pgettext("question", "Closed")
    if outcome == "answered" and answered_with:
        return f"{said} “{answered_with}”"
    return said


def human_size(size: int) -> str:
    """A byte count for people: `512 B`, `48.2 kB`, `3.1 MB` (powers of 1000, the UI
    language's decimal point)."""
    if size < 1000:
        return f"{size} B"
    value, unit = float(size), "B"
    for unit in ("kB", "MB", "GB", "TB"):  # noqa: B007 (the last unit is the one used)
        value /= 1000
        if value < 1000:
            break
    if value >= 100:
        return f"{value:.0f} {unit}"
    return f"{value:.1f} {unit}".replace(".", pgettext("decimal separator", "."))


_KINDS: dict[str, Callable[[], str]] = {
    "image": lambda: pgettext("attachment kind", "image"),
    "pdf": lambda: pgettext("attachment kind", "PDF"),
    "spreadsheet": lambda: pgettext("attachment kind", "spreadsheet"),
    "text": lambda: pgettext("attachment kind", "text"),
    "office": lambda: pgettext("attachment kind", "document"),
}


def attachment_words(kind: str, size: int) -> tuple[str, str]:
    """An attachment's kind in words ("image"; another kind as sent) and its size."""
    name = _KINDS.get(kind)
    return (name() if name is not None else kind), human_size(max(0, size))
