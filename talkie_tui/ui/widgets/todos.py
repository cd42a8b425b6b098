"""The agent's todo list for the turn: a checklist, redrawn in place as the agent updates it."""

from __future__ import annotations

from typing import ClassVar

from textual.content import Content
from textual.widget import Widget

from talkie_tui.chat.turns import TodoPart
from talkie_tui.i18n import _

__all__ = ["TodoView"]

DONE, OPEN = "☑", "☐"


class TodoView(Widget):
    """A `TodoPart`: a heading with how many are done, then ☐ / ☑ and each item's text."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "todos--heading",
        "todos--done",
        "todos--open",
        "todos--box",
    }

    def __init__(self, part: TodoPart) -> None:
        super().__init__(classes="todos")
        self.part = part

    def refresh_part(self) -> None:
        """Redraw after the agent replaced the items."""
        self.set_class(bool(self.part.items) and all(d for _t, d in self.part.items), "-all-done")
        self.refresh(layout=True)

    def on_mount(self) -> None:
        self.refresh_part()

    def render(self) -> Content:
        """The checklist; item text is plain (never markup)."""
        items = self.part.items
        done = sum(1 for _text, is_done in items if is_done)
        heading = _("To do · {done} of {total} done").format(done=done, total=len(items))
        lines = [Content.styled(heading, self.get_visual_style("todos--heading"))]
        box = self.get_visual_style("todos--box")
        for text, is_done in items:
            style = self.get_visual_style("todos--done" if is_done else "todos--open")
            lines.append(Content.assemble((f"{DONE if is_done else OPEN} ", box), (text, style)))
        return Content("\n").join(lines)
