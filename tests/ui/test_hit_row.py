"""A search hit in a narrow thread list shows its match: the words before it give way."""

from __future__ import annotations

import pytest

from talkie_tui.backends.base import SearchHit
from talkie_tui.ui.widgets.thread_rows import HitRow, near_match

SNIPPET = "Rottnest Island in March: ferry, bikes, a «quokka» selfie."


@pytest.mark.parametrize("width", [28, 32, 40, 60])
def test_the_match_is_in_view_at_every_width(width: int) -> None:
    row = HitRow(SearchHit("s1", "m1", "Travel plans", SNIPPET))
    shown = row._content(width).plain
    assert len(shown) == width
    assert shown.startswith("⌕ Travel plans ")
    assert "quokka" in shown


def test_a_snippet_that_fits_is_left_whole() -> None:
    assert near_match(SNIPPET, 80) == SNIPPET
    assert (
        near_match("no marks at all, however long it is", 5)
        == "no marks at all, however long it is"
    )
    row = HitRow(SearchHit("s1", "m1", "Travel plans", SNIPPET))
    assert row._content(80).plain.rstrip() == "⌕ Travel plans " + SNIPPET.replace("«", "").replace(
        "»", ""
    )


def test_a_cut_head_keeps_a_few_words_before_the_match() -> None:
    assert near_match(SNIPPET, 20) == "… bikes, a «quokka» selfie."  # ten characters before it
    assert near_match(SNIPPET, 8).startswith("…«quokka»")  # no room for more
