"""The Markdown component classes of one screen, carried by one hidden widget.

Textual gives each widget a styled virtual node per component class (~40 objects each); every
`MarkdownView` of a screen reads its styles from the screen's one `MarkdownPalette` instead
(`palette_for`), styled in markdown.tcss.
"""

from __future__ import annotations

from typing import Any, ClassVar
from weakref import WeakKeyDictionary

from textual.geometry import Size
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from talkie_tui.ui.support.markdown import STYLE_NAMES

__all__ = ["MarkdownPalette", "component_class", "palette_for"]

_COMPONENT_PREFIX = "markdown-view--"


def component_class(style_name: str) -> str:
    """The component class that styles the renderer's `style_name` span."""
    return _COMPONENT_PREFIX + style_name.removeprefix("md.")


class MarkdownPalette(Widget):
    """Hidden carrier of the Markdown component classes: one per screen, shared by every view.

    Textual gives each widget a styled virtual node per component class (~40 objects each). On
    every message of a long history that was ~700 extra objects per message and made full
    garbage collections (UI pauses) twice as long, so the classes live here once instead.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {component_class(name) for name in STYLE_NAMES}

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """No lines, even where markdown.tcss (which hides it) is not loaded."""
        return 0

    def render_line(self, y: int) -> Strip:
        """Nothing to paint."""
        return Strip.blank(self.size.width)


_palettes: WeakKeyDictionary[Screen[Any], MarkdownPalette] = WeakKeyDictionary()


def palette_for(screen: Screen[Any]) -> MarkdownPalette:
    """The screen's palette, mounted on first use."""
    palette = _palettes.get(screen)
    if palette is None or not palette.is_attached:
        palette = _palettes[screen] = MarkdownPalette()
        screen.mount(palette)
    return palette
