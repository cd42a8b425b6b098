"""One line of a list, a left part and a muted right part (the thread list's rows, the
connect screen's known servers), and text made one line.

Apart from the thread rows so that the server picker draws its list without the conversation's
vocabulary (talkie/1's pydantic models, issue 24).
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

__all__ = ["SplitRow", "one_line"]


class SplitRow(Visual):
    """One line: a left part cut with an ellipsis to fit, a muted right part flush right.

    A custom Visual so that every row is exactly one line without measuring text: this keeps
    thousands of rows cheap in an OptionList, and the right column stays aligned at any width.
    """

    def __init__(self, left: Content, right: str = "") -> None:
        self._parts: tuple[Content, str] | None = (left, right)

    def parts(self) -> tuple[Content, str]:
        """The left content and the right text."""
        assert self._parts is not None
        return self._parts

    def _content(self, width: int) -> Content:
        left, right = self.parts()
        right_width = cell_len(right)
        show_right = bool(right) and width >= right_width + 8
        left_width = max(0, width - (right_width + 1 if show_right else 0))
        left = left.truncate(left_width, ellipsis=True, pad=True)
        if not show_right:
            return left
        return Content.assemble(left, " ", (right, "$text-muted"))

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        """Render the row at exactly `width` cells."""
        return self._content(width).render_strips(width, 1, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        """Both parts side by side."""
        left, right = self.parts()
        return left.cell_length + (1 + cell_len(right) if right else 0)

    def get_minimal_width(self, rules: RulesMap) -> int:
        """Room for a character and an ellipsis."""
        return 2

    def get_height(self, rules: RulesMap, width: int) -> int:
        """Always one line."""
        return 1


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines too) made one space."""
    return " ".join(text.split())
