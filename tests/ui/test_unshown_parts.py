"""A part the transcript has no view for yet is skipped, never an error."""

from __future__ import annotations

import pytest

from talkie_tui.chat.turns import (
    InterjectionPart,
    Part,
    QuestionPart,
    TodoPart,
    UiBlockPart,
)
from talkie_tui.ui.widgets.transcript import _part_view


@pytest.mark.parametrize(
    "part",
    [
        UiBlockPart("b1", "markdown", {"kind": "markdown", "text": "x"}),
        TodoPart([("a", False)]),
        QuestionPart("q1", "input", []),
        InterjectionPart("hi"),
    ],
)
def test_a_part_without_a_view_gets_an_empty_placeholder(part: Part) -> None:
    view = _part_view(part)
    assert view.has_class("part-unshown") and not view.display
