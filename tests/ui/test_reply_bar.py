"""What the reply bar above the composer quotes of the message answered."""

from __future__ import annotations

from talkie_tui.chat.turns import AttachmentPart, NoticePart, TextPart, Turn
from talkie_tui.ui.widgets.reply_bar import PREVIEW_CHARS, reply_target


def test_a_reply_quotes_the_message_as_plain_cleaned_text() -> None:
    """The bar's quote: control sequences gone, markup kept as characters, long text cut."""
    hostile = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 [link=x]me[/link]\x1b[31m red"
    turn = Turn("msg_1", "assistant", [TextPart("msg_1", [hostile])], author="Bot\x1b[2J")
    target = reply_target(turn)
    assert target is not None
    assert target.preview == "click [link=x]me[/link] red"
    long_turn = Turn("msg_2", "assistant", [TextPart("msg_2", ["word " * 40])])
    cut = reply_target(long_turn)
    assert cut is not None and len(cut.preview) == PREVIEW_CHARS and cut.preview.endswith("…")
    failed = Turn("msg_3", "user", [TextPart("msg_3", ["lost"])], state="failed")
    assert reply_target(failed) is None


def test_a_file_without_words_is_quoted_by_its_name_and_a_notice_is_no_message() -> None:
    file = AttachmentPart("med_1", "offer\x1b[31m.pdf", "application/pdf", 10, "file")
    target = reply_target(Turn("msg_4", "user", [file]))
    assert target is not None and target.preview == "offer.pdf"
    notice = Turn("msg_5", "assistant", [NoticePart("Earlier messages are gone.")])
    assert reply_target(notice) is None


def test_the_quote_shows_the_words_of_markdown_not_its_marks() -> None:
    text = (
        "# Offer\n\n**Alfa s.r.o.** is a client (*active*), "
        "see [the CRM](https://crm.example).\n\n- one\n- `two`"
    )
    target = reply_target(Turn("msg_6", "assistant", [TextPart("msg_6", [text])]))
    assert target is not None
    assert target.preview == "Offer Alfa s.r.o. is a client (active), see the CRM. one two"
