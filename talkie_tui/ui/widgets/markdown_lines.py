"""The wrapped lines of a run of Markdown blocks, as a `MarkdownView` keeps them."""

from __future__ import annotations

from rich.text import Text

from talkie_tui.ui.support.markdown import MarkdownBlock, stack_blocks

__all__ = ["BlockLines", "line_start"]


def line_start(text: str, line: int) -> int:
    """Character offset where line number `line` (0-based) of `text` starts."""
    offset = 0
    for _ in range(line):
        offset = text.index("\n", offset) + 1
    return offset


class BlockLines:
    """A run of blocks and their wrapped lines (one blank line between blocks)."""

    __slots__ = ("blocks", "lines")

    def __init__(self) -> None:
        self.blocks: list[MarkdownBlock] = []
        self.lines: list[Text] = []

    def extend(self, blocks: list[MarkdownBlock], width: int, *, separated: bool) -> None:
        """Add blocks; `separated` puts a blank line before the first one too."""
        # Width 0 means "not laid out yet": keep the blocks, wrap them at the first layout.
        if width > 0:
            self.lines += stack_blocks(blocks, width, after_block=separated or bool(self.blocks))
        self.blocks += blocks

    def relayout(self, width: int, *, separated: bool) -> None:
        """Wrap every block again at a new width."""
        blocks, self.blocks, self.lines = self.blocks, [], []
        self.extend(blocks, width, separated=separated)
