"""The Markdown subset (`ui/markdown.py render_markdown`) on arbitrary server text, and the
link policy (`ui/links.py check_link`) on arbitrary URLs.

Rules (§7, DESIGN): rendering never fails; no control character reaches a rendered segment
(server text arrives cleaned, but Markdown entities such as `&#13;` must not bring one back);
a link opens only when it is `https:` or same-origin.
"""

from __future__ import annotations

import io

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rich.console import Console

from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.urls import origin_of
from talkie_tui.ui.support.links import check_link
from talkie_tui.ui.support.markdown import code_blocks, render_markdown
from tests.fuzz.kit import fuzz_settings, nasty_text, unsafe

pytestmark = pytest.mark.fuzz

MARKDOWN = [
    "# ",
    "## ",
    "- ",
    "* ",
    "1. ",
    "> ",
    "```\n",
    "    ",
    "**",
    "*",
    "_",
    "`",
    "[",
    "](",
    ")",
    "![",
    "<",
    ">",
    "&",
    ";",
    "#",
    "x",
    "\n",
    "\n\n",
    "---\n",
    "[ref]: https://example.org\n",
    "[ref]",
    "<https://example.org/auto>",
    "&#13;",
    "&#12;",
    "&#x7f;",
    "&#133;",
    "&#x9b;",
    "&#0;",
    "&nbsp;",
    "\t",
]
markdown = st.lists(
    st.one_of(st.sampled_from(MARKDOWN), nasty_text, st.text(max_size=5)), max_size=25
).map(lambda parts: clean_text("".join(parts)))
"""Markdown built from syntax, entities and hostile text, cleaned as the client cleans it."""

console = Console(
    file=io.StringIO(), width=80, color_system=None, force_terminal=True, legacy_windows=False
)


@fuzz_settings(300)
@given(text=markdown, width=st.sampled_from([1, 2, 7, 40, 80]))
@example(text="a&#13;b &#12; `&#13;` [x](&#13;) &#x85;", width=40)
def test_any_markdown_renders_with_no_control_characters(text: str, width: int) -> None:
    """§7: rendering never fails; lines, segments and link targets carry no control byte."""
    document = render_markdown(text)
    lines = document.lines(width)
    assert unsafe(*(line.plain for line in lines)) == []
    segments = list(console.render(document, console.options.update_width(width)))
    assert unsafe(*(segment.text for segment in segments if not segment.control)) == []
    for link in document.links:
        assert unsafe(link.label, link.url) == []
    assert unsafe(*code_blocks(text)) == []


ORIGIN = "https://crm.example.com"
URL_PIECES = [
    "https://",
    "http://",
    "HTTPS://",
    "javascript:",
    "JaVaScRiPt:",
    "data:text/html,",
    "file:///",
    "vbscript:",
    "//",
    "/",
    "\\",
    "@",
    ":",
    "crm.example.com",
    "evil.example",
    "127.0.0.2",
    ":443",
    ":8443",
    "%2F",
    "%0a",
    " ",
    "\t",
    "\x00",
    "#",
    "?",
    "..",
]
urls = st.lists(st.one_of(st.sampled_from(URL_PIECES), st.text(max_size=4)), max_size=8).map(
    "".join
)


@fuzz_settings(300)
@given(url=urls)
@example(url=" javascript:alert(1)")
@example(url="/\\evil.example/x")
@example(url="https://crm.example.com@evil.example/")
def test_a_link_opens_only_when_https_or_same_origin(url: str) -> None:
    """§6/§7: check_link never fails and allows only https or same-origin targets."""
    target = check_link(url, ORIGIN)
    if not target.allowed:
        return
    parsed = httpx.URL(target.url)
    assert parsed.scheme == "https" or origin_of(parsed) == ORIGIN
    assert target.same_origin == (origin_of(parsed) == ORIGIN)
    assert unsafe(target.url) == []
