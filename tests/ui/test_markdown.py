"""The §7 Markdown renderer: every construct, links, and nothing from the server interpreted."""

from __future__ import annotations

from rich.console import Console
from rich.style import Style
from rich.text import Text

from talkie_tui.ui.support.markdown import (
    LINK_LABEL_KEY,
    LINK_URL_KEY,
    Link,
    StyleSource,
    parse_blocks,
    render_markdown,
    render_segments,
)


def plain(markdown: str, width: int = 80) -> list[str]:
    """The rendered lines as plain text, trailing spaces removed."""
    return [line.plain.rstrip() for line in render_markdown(markdown).lines(width)]


def styles_over(line: Text, fragment: str) -> set[str]:
    """Names of the styles whose spans cover `fragment` in `line`."""
    start = line.plain.index(fragment)
    end = start + len(fragment)
    return {
        str(span.style)
        for span in line.spans
        if isinstance(span.style, str) and span.start <= start and span.end >= end
    }


def link_metas(line: Text) -> list[dict[str, object]]:
    return [
        span.style.meta
        for span in line.spans
        if isinstance(span.style, Style) and LINK_URL_KEY in span.style.meta
    ]


def test_paragraphs_are_separated_by_one_blank_line() -> None:
    assert plain("one\n\n\n\ntwo") == ["one", "", "two"]


def test_bold_italic_and_inline_code_are_styled_spans() -> None:
    (line,) = render_markdown("a **bold** b *italic* c `code` d").lines(80)
    assert line.plain == "a bold b italic c code d"
    assert styles_over(line, "bold") == {"md.strong"}
    assert styles_over(line, "italic") == {"md.em"}
    assert styles_over(line, "code") == {"md.code"}


def test_nested_emphasis_keeps_both_styles() -> None:
    (line,) = render_markdown("***both***").lines(80)
    assert styles_over(line, "both") == {"md.strong", "md.em"}


def test_headings_carry_their_level() -> None:
    lines = render_markdown("# One\n\n## Two\n\n### Three").lines(80)
    assert [line.plain for line in lines] == ["One", "", "Two", "", "Three"]
    assert lines[0].spans[0].style == "md.h1"
    assert lines[2].spans[0].style == "md.h2"
    assert lines[4].spans[0].style == "md.h3"


def test_soft_line_breaks_are_kept_for_field_lines() -> None:
    assert plain("**Owner:** Ada\n**Status:** active") == ["Owner: Ada", "Status: active"]


def test_bullet_lists_nest_with_hanging_indent() -> None:
    text = "- one\n- two is long enough to wrap here\n  - nested\n- three"
    assert plain(text, width=20) == [
        "• one",
        "• two is long enough",
        "  to wrap here",
        "  ◦ nested",
        "• three",
    ]


def test_numbered_lists_keep_start_and_delimiter_and_align() -> None:
    assert plain("9. nine\n10. ten") == [" 9. nine", "10. ten"]
    assert plain("3) three\n4) four") == ["3) three", "4) four"]


def test_loose_lists_keep_their_blank_lines() -> None:
    assert plain("- a\n\n- b") == ["• a", "", "• b"]


def test_fenced_code_folds_by_cell_and_pads_to_the_width() -> None:
    lines = render_markdown("```python\nx = 1\n" + "y" * 30 + "\n```").lines(20)
    assert [line.plain for line in lines] == [
        " x = 1              ",
        " " + "y" * 18 + " ",
        " " + "y" * 12 + " " * 7,
    ]
    assert all(line.style == "md.fence" for line in lines)


def test_indented_code_and_tabs() -> None:
    assert plain("    a\tb") == [" a   b"]


def test_block_quotes_get_a_bar() -> None:
    assert plain("> quoted\n> text\n>\n> more") == ["▌ quoted", "▌ text", "▌", "▌ more"]


def test_thematic_break_spans_the_width() -> None:
    assert plain("a\n\n---\n\nb", width=10) == ["a", "", "─" * 10, "", "b"]


def test_links_show_label_then_url_and_are_listed() -> None:
    document = render_markdown("See [the docs](https://example.com/docs) now.")
    (line,) = document.lines(80)
    assert line.plain == "See the docs ⟨https://example.com/docs⟩ now."
    assert styles_over(line, "the docs") == {"md.link"}
    assert styles_over(line, "⟨https://example.com/docs⟩") == {"md.url"}
    assert document.links == [Link("the docs", "https://example.com/docs")]
    assert link_metas(line)[0] == {
        LINK_URL_KEY: "https://example.com/docs",
        LINK_LABEL_KEY: "the docs",
    }


def test_link_styles_never_carry_actions_or_terminal_hyperlinks() -> None:
    (line,) = render_markdown("[x](https://e.example/a'b) [y](https://e.example/)").lines(80)
    for span in line.spans:
        if isinstance(span.style, Style):
            assert span.style.link is None
            assert not any(key.startswith("@") for key in span.style.meta)


def test_autolinks_are_not_repeated() -> None:
    document = render_markdown("<https://example.com>")
    assert plain("<https://example.com>") == ["https://example.com"]
    assert document.links == [Link("https://example.com", "https://example.com")]


def test_links_are_listed_in_document_order_across_blocks() -> None:
    document = render_markdown("[a](https://a.example)\n\n- [b](https://b.example)\n\n> [c](/c)")
    assert [link.url for link in document.links] == [
        "https://a.example",
        "https://b.example",
        "/c",
    ]


def test_unsafe_link_schemes_stay_plain_text() -> None:
    document = render_markdown("[click](javascript:alert(1))")
    assert document.links == []
    assert plain("[click](javascript:alert(1))") == ["[click](javascript:alert(1))"]


def test_reference_links_resolve() -> None:
    document = render_markdown("[docs][d]\n\n[d]: https://example.com/d")
    assert document.links == [Link("docs", "https://example.com/d")]


def test_references_carry_into_a_later_parse() -> None:
    earlier = parse_blocks("[d]: https://example.com/d\n")
    later = parse_blocks("[docs][d]", earlier.references)
    assert later.blocks[0].links == (Link("docs", "https://example.com/d"),)


def test_images_show_only_their_alt_text() -> None:
    document = render_markdown("![a *logo*](https://x.example/logo.png) after")
    (line,) = document.lines(80)
    assert line.plain == "a logo after"
    assert "logo.png" not in line.plain
    assert document.links == []
    assert styles_over(line, "a logo") == {"md.alt"}


def test_html_is_shown_literally() -> None:
    assert plain("<b>bold</b> and <i>x</i>") == ["<b>bold</b> and <i>x</i>"]
    assert plain("<script>\nalert(1)\n</script>") == ["<script>", "alert(1)", "</script>"]
    assert plain("<div>\n\n*x*\n\n</div>") == ["<div>", "", "x", "", "</div>"]


def test_markup_characters_are_literal() -> None:
    source = "[b]bold[/b] [@click=app.quit]x[/] [link=https://e.example]y[/link]"
    (line,) = render_markdown(source).lines(120)
    assert line.plain == source
    assert line.spans == []


def test_a_long_line_wraps_at_the_width_and_keeps_every_word() -> None:
    words = [f"word{i}" for i in range(40)]
    lines = plain(" ".join(words), width=30)
    assert len(lines) > 5
    assert all(len(line) <= 30 for line in lines)
    assert " ".join(lines).split() == words


def test_a_long_word_folds() -> None:
    assert plain("x" * 25, width=10) == ["x" * 10, "x" * 10, "x" * 5]


def test_blocks_report_their_source_lines() -> None:
    blocks = parse_blocks("# T\n\npara\n\n- a\n- b\n").blocks
    assert [(b.kind, b.start_line) for b in blocks] == [
        ("heading", 0),
        ("paragraph", 2),
        ("bullet_list", 4),
    ]


def test_style_names_resolve_through_a_style_source() -> None:
    source = StyleSource({"md.strong": Style(color="red")}.get)
    (line,) = render_markdown("a **b**").lines(80)
    segments = render_segments(line, source)
    assert [(s.text, s.style) for s in segments if s.text] == [
        ("a ", Style()),
        ("b", Style(color="red")),
    ]


def test_a_document_prints_on_a_plain_rich_console() -> None:
    console = Console(width=40, record=True, color_system=None)
    console.print(render_markdown("# Title\n\nSome [link](https://e.example)."))
    assert console.export_text().splitlines() == [
        "Title",
        "",
        "Some link ⟨https://e.example⟩.",
    ]
