"""The §7 Markdown subset as Rich text, built span by span: server text is never markup or HTML.

Parsing uses markdown-it (CommonMark, HTML off). Each top-level block becomes a `MarkdownBlock`
that wraps itself to a width as a list of `rich.text.Text` lines. Spans carry style *names*
(``md.h1``, ``md.link``, …) rather than colours, so a widget can resolve them from its stylesheet
and re-theme without re-parsing; `DEFAULT_STYLES` resolves them on a plain Rich console.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple, cast

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode
from rich.cells import cell_len, chop_cells
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

__all__ = [
    "DEFAULT_STYLES",
    "LINK_LABEL_KEY",
    "LINK_URL_KEY",
    "STYLE_NAMES",
    "Link",
    "MarkdownBlock",
    "MarkdownDocument",
    "ParsedBlocks",
    "StyleSource",
    "code_blocks",
    "parse_blocks",
    "render_markdown",
    "render_segments",
    "stack_blocks",
]

# Style meta keys on link spans: a click handler reads the URL from the style under the mouse, so
# no action string is ever built from server text and Rich's `link=` (OSC 8) is never used.
LINK_URL_KEY = "talkie.link.url"
LINK_LABEL_KEY = "talkie.link.label"

STYLE_NAMES: tuple[str, ...] = (
    *(f"md.h{level}" for level in range(1, 7)),
    "md.strong",
    "md.em",
    "md.code",
    "md.fence",
    "md.link",
    "md.url",
    "md.alt",
    "md.bullet",
    "md.quote",
    "md.rule",
)

DEFAULT_STYLES: Mapping[str, Style] = {
    "md.h1": Style(bold=True, underline=True),
    "md.h2": Style(bold=True),
    "md.h3": Style(bold=True),
    "md.h4": Style(bold=True),
    "md.h5": Style(bold=True),
    "md.h6": Style(bold=True),
    "md.strong": Style(bold=True),
    "md.em": Style(italic=True),
    "md.code": Style(reverse=True),
    "md.fence": Style(dim=True),
    "md.link": Style(underline=True),
    "md.url": Style(dim=True),
    "md.alt": Style(italic=True),
    "md.bullet": Style(bold=True),
    "md.quote": Style(italic=True),
    "md.rule": Style(dim=True),
}

_BULLETS = ("•", "◦", "▪")
_QUOTE_BAR = "▌ "
_FENCE_PAD = 1


class Link(NamedTuple):
    """A link found in rendered Markdown: what the user sees and where it goes."""

    label: str
    url: str


class StyleSource:
    """Resolves style names to Rich styles; the duck-typed `console` that `Text.render` needs."""

    __slots__ = ("_cache", "_lookup")

    def __init__(self, lookup: Callable[[str], Style | None]) -> None:
        self._lookup = lookup
        self._cache: dict[str, Style] = {}

    def get_style(self, name: str | Style, *, default: Style | None = None) -> Style:
        """Return the style for `name` (a Style passes through; unknown names are null)."""
        if isinstance(name, Style):
            return name
        style = self._cache.get(name)
        if style is None:
            style = self._lookup(name) or default or Style.null()
            self._cache[name] = style
        return style


def render_segments(line: Text, styles: StyleSource) -> list[Segment]:
    """Render one wrapped line into segments, resolving its style names through `styles`."""
    if not line.spans:
        # Text.render leaves a span-less line's own style to the caller; apply it here.
        return [Segment(line.plain, styles.get_style(line.style) if line.style else None)]
    return list(line.render(cast(Console, styles)))


@lru_cache(maxsize=1)
def _wrap_console() -> Console:
    # Text.wrap only consults the console for justification; one quiet instance serves all.
    return Console(width=80, color_system=None, force_terminal=False, legacy_windows=False)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


class _Node:
    """A block laid out at a given width."""

    __slots__ = ()

    def lines(self, width: int) -> list[Text]:
        raise NotImplementedError


class _Paragraph(_Node):
    __slots__ = ("text",)

    def __init__(self, text: Text) -> None:
        self.text = text

    def lines(self, width: int) -> list[Text]:
        text = self.text
        key = (text.plain, tuple(text.spans), text.style, width)
        wrapped = _WRAPPED.get(key)
        if wrapped is None:
            if len(_WRAPPED) >= _WRAPPED_MAX:
                _WRAPPED.clear()
            wrapped = _WRAPPED[key] = list(
                text.wrap(_wrap_console(), width, justify="default", overflow="fold")
            )
        return list(wrapped)


_WRAPPED: dict[tuple[object, ...], list[Text]] = {}
"""Wrapped paragraphs by text, styles and width. The open tail of a streaming answer is parsed
and laid out again some 24 times a second, and all but its last paragraph are unchanged: a
third of that work was wrapping them again. The lines are shared, never changed in place."""
_WRAPPED_MAX = 2048


class _Code(_Node):
    __slots__ = ("code",)

    def __init__(self, code: str) -> None:
        self.code = code.removesuffix("\n")

    def lines(self, width: int) -> list[Text]:
        # Code folds at the cell boundary (no word wrap) and is padded so its background is a block.
        inner = max(1, width - 2 * _FENCE_PAD)
        pad = " " * _FENCE_PAD
        out: list[Text] = []
        for source_line in self.code.split("\n"):
            for chunk in chop_cells(source_line.expandtabs(4), inner) or [""]:
                filler = " " * (inner - cell_len(chunk))
                out.append(Text(f"{pad}{chunk}{filler}{pad}", style="md.fence"))
        return out


class _Rule(_Node):
    __slots__ = ()

    def lines(self, width: int) -> list[Text]:
        return [Text("─" * width, style="md.rule")]


def _prefixed(prefix: str, line: Text, style: str | None = None) -> Text:
    """`prefix` (styled on its own, as a span) followed by `line`."""
    out = Text()
    out.append(prefix, style)
    out.append_text(line)
    return out


def _stack(nodes: Sequence[_Node], width: int, *, spaced: bool) -> list[Text]:
    out: list[Text] = []
    for index, node in enumerate(nodes):
        if spaced and index:
            out.append(Text())
        out.extend(node.lines(width))
    return out


class _List(_Node):
    __slots__ = ("items", "markers", "tight")

    def __init__(self, items: list[list[_Node]], markers: list[str], *, tight: bool) -> None:
        self.items = items
        self.markers = markers
        self.tight = tight

    def lines(self, width: int) -> list[Text]:
        gutter = max(map(len, self.markers), default=1) + 1
        inner = max(1, width - gutter)
        indent = " " * gutter
        out: list[Text] = []
        for index, (marker, children) in enumerate(zip(self.markers, self.items, strict=True)):
            if index and not self.tight:
                out.append(Text())
            body = _stack(children, inner, spaced=not self.tight) or [Text()]
            out.append(_prefixed(marker.rjust(gutter - 1) + " ", body[0], "md.bullet"))
            out.extend(_prefixed(indent, line) for line in body[1:])
        return out


class _Quote(_Node):
    __slots__ = ("children",)

    def __init__(self, children: list[_Node]) -> None:
        self.children = children

    def lines(self, width: int) -> list[Text]:
        body = _stack(self.children, max(1, width - len(_QUOTE_BAR)), spaced=True)
        out: list[Text] = []
        for line in body or [Text()]:
            quoted = _prefixed(_QUOTE_BAR, line, "md.quote")
            quoted.stylize_before("md.quote", len(_QUOTE_BAR))
            out.append(quoted)
        return out


class _Inline:
    """Builds one Text from markdown-it inline nodes, collecting links on the way."""

    __slots__ = ("links", "text")

    def __init__(self, links: list[Link]) -> None:
        self.text = Text()
        self.links = links

    def add(self, nodes: Iterable[SyntaxTreeNode]) -> Text:
        text = self.text
        for node in nodes:
            kind = node.type
            if kind == "text":
                text.append(node.content)
            elif kind in ("softbreak", "hardbreak"):
                # Chat answers mean their line breaks (fields, addresses), so keep them.
                text.append("\n")
            elif kind == "code_inline":
                text.append(node.content, "md.code")
            elif kind == "strong" or kind == "em":
                start = len(text)
                self.add(node.children)
                text.stylize(f"md.{kind}", start, len(text))
            elif kind == "link":
                self._link(node)
            elif kind == "image":
                # Images are never fetched or linked: only their alt text is shown.
                start = len(text)
                self.add(node.children)
                text.stylize("md.alt", start, len(text))
            elif node.content:
                # html_inline and anything unknown: shown literally, never interpreted.
                text.append(node.content)
            else:
                self.add(node.children)
        return text

    def _link(self, node: SyntaxTreeNode) -> None:
        text = self.text
        url = str(node.attrs.get("href", ""))
        start = len(text)
        self.add(node.children)
        label = text.plain[start:]
        target = Style(meta={LINK_URL_KEY: url, LINK_LABEL_KEY: label})
        text.stylize("md.link", start, len(text))
        text.stylize(target, start, len(text))
        if label.strip() != url:
            # The user must see where a link goes, not only what it claims to be.
            suffix_start = len(text)
            text.append(f" ⟨{url}⟩", "md.url")
            text.stylize(target, suffix_start + 1, len(text))
        self.links.append(Link(label, url))


def _inline_text(node: SyntaxTreeNode, links: list[Link]) -> Text:
    inline = node.children[0] if node.children else None
    if inline is None:
        return Text()
    return _Inline(links).add(inline.children)


def _heading(node: SyntaxTreeNode, links: list[Link]) -> _Node:
    text = _inline_text(node, links)
    text.stylize_before(f"md.{node.tag}")
    return _Paragraph(text)


def _list(node: SyntaxTreeNode, links: list[Link], depth: int) -> _Node:
    items = [_blocks(item.children, links, depth + 1) for item in node.children]
    if node.type == "ordered_list":
        start = int(str(node.attrs.get("start", 1)))
        delimiter = node.markup or "."
        markers = [f"{start + offset}{delimiter}" for offset in range(len(items))]
    else:
        markers = [_BULLETS[depth % len(_BULLETS)]] * len(items)
    # markdown-it hides the paragraphs of a tight list; a loose list gets blank lines.
    tight = all(
        child.hidden
        for item in node.children
        for child in item.children
        if child.type == "paragraph"
    )
    return _List(items, markers, tight=tight)


def _block(node: SyntaxTreeNode, links: list[Link], depth: int) -> _Node | None:
    kind = node.type
    if kind == "paragraph":
        return _Paragraph(_inline_text(node, links))
    if kind == "heading":
        return _heading(node, links)
    if kind in ("fence", "code_block"):
        return _Code(node.content)
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, links, depth)
    if kind == "blockquote":
        return _Quote(_blocks(node.children, links, depth))
    if kind == "hr":
        return _Rule()
    if node.content:
        # html_block and anything unknown: literal text.
        return _Paragraph(Text(node.content.removesuffix("\n")))
    return None


def _blocks(nodes: Iterable[SyntaxTreeNode], links: list[Link], depth: int) -> list[_Node]:
    out: list[_Node] = []
    for node in nodes:
        block = _block(node, links, depth)
        if block is not None:
            out.append(block)
    return out


class MarkdownBlock:
    """One top-level block (paragraph, list, heading, code, quote…), wrapped lazily per width."""

    __slots__ = ("_lines", "_node", "_width", "end_line", "kind", "links", "start_line")

    def __init__(
        self, node: _Node, kind: str, links: Sequence[Link], start_line: int, end_line: int
    ) -> None:
        self._node = node
        self.kind = kind
        self.links: tuple[Link, ...] = tuple(links)
        self.start_line = start_line
        self.end_line = end_line
        self._width = -1
        self._lines: list[Text] = []

    def lines(self, width: int) -> list[Text]:
        """The block wrapped to `width` cells (cached for the last width asked)."""
        width = max(1, width)
        if width != self._width:
            self._lines = self._node.lines(width)
            self._width = width
        return self._lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _render_lines(self.lines(options.max_width), console)


def _render_lines(lines: Iterable[Text], console: Console) -> Iterable[Segment]:
    styles = StyleSource(lambda name: console.get_style(name, default=DEFAULT_STYLES.get(name)))
    newline = Segment.line()
    for line in lines:
        yield from render_segments(line, styles)
        yield newline


@dataclass(frozen=True, slots=True)
class ParsedBlocks:
    """Top-level blocks of a source text, and the link reference definitions seen."""

    blocks: list[MarkdownBlock]
    references: dict[str, Any]


def parse_blocks(markdown: str, references: Mapping[str, Any] | None = None) -> ParsedBlocks:
    """Parse into top-level blocks; `references` carries definitions from earlier text."""
    env: dict[str, Any] = {"references": dict(references or {})}
    root = SyntaxTreeNode(_parser().parse(markdown, env))
    blocks: list[MarkdownBlock] = []
    for node in root.children:
        links: list[Link] = []
        block = _block(node, links, 0)
        if block is None:
            continue
        start, end = node.map or (0, 0)
        blocks.append(MarkdownBlock(block, node.type, links, start, end))
    return ParsedBlocks(blocks, env["references"])


def stack_blocks(
    blocks: Iterable[MarkdownBlock], width: int, *, after_block: bool = False
) -> list[Text]:
    """Lines of `blocks` at `width`, a blank line between blocks (and first, if `after_block`)."""
    out: list[Text] = []
    for block in blocks:
        if out or after_block:
            out.append(Text())
        out.extend(block.lines(width))
    return out


class MarkdownDocument:
    """Rendered Markdown: its blocks, separated by one blank line, and its links."""

    __slots__ = ("blocks",)

    def __init__(self, blocks: Sequence[MarkdownBlock]) -> None:
        self.blocks = tuple(blocks)

    @property
    def links(self) -> list[Link]:
        """Every link in document order."""
        return [link for block in self.blocks for link in block.links]

    def lines(self, width: int) -> list[Text]:
        """All lines at `width`."""
        return stack_blocks(self.blocks, width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from _render_lines(self.lines(options.max_width), console)


def render_markdown(markdown: str) -> MarkdownDocument:
    """Render a whole Markdown text at once."""
    return MarkdownDocument(parse_blocks(markdown).blocks)


def code_blocks(markdown: str) -> list[str]:
    """The contents of every fenced or indented code block, in order (for copying)."""
    return [
        token.content.removesuffix("\n")
        for token in _parser().parse(markdown)
        if token.type in ("fence", "code_block")
    ]
