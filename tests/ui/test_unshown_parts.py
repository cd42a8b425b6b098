"""Every part of a turn has its view: the parts Minara and Cuckoo brought are drawn, not skipped."""

from __future__ import annotations

import pytest

from talkie_tui.chat.turns import (
    AttachmentPart,
    ButtonsPart,
    InterjectionPart,
    MessageButton,
    Part,
    QuestionPart,
    QuickRepliesPart,
    ReplyPart,
    TodoPart,
    UiBlockPart,
)
from talkie_tui.ui.widgets.attachment import AttachmentView
from talkie_tui.ui.widgets.buttons import ButtonsView, QuickRepliesView, ReplyQuoteView
from talkie_tui.ui.widgets.interjection import InterjectionView
from talkie_tui.ui.widgets.question import QuestionView
from talkie_tui.ui.widgets.todos import TodoView
from talkie_tui.ui.widgets.transcript import _part_view
from talkie_tui.ui.widgets.ui_block import UiBlockView


@pytest.mark.parametrize(
    ("part", "view"),
    [
        (UiBlockPart("b1", "markdown", {"kind": "markdown", "text": "x"}), UiBlockView),
        (TodoPart([("a", False)]), TodoView),
        (QuestionPart("q1", "input", []), QuestionView),
        (InterjectionPart("hi"), InterjectionView),
        (AttachmentPart("k", "a.png", "image/png", 1, "image"), AttachmentView),
        (ButtonsPart("m1", [(MessageButton("Yes", "yes"),)]), ButtonsView),
        (QuickRepliesPart(["Thanks"]), QuickRepliesView),
        (ReplyPart("m0", "user", "Hi"), ReplyQuoteView),
    ],
)
def test_each_new_part_has_its_view(part: Part, view: type) -> None:
    shown = _part_view(part)
    assert isinstance(shown, view) and not shown.has_class("part-unshown")
