"""Result cards (§6) and link suggestions: every block, fallbacks, activation, inert text."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console
from textual.content import Content

from talkie_tui.protocol.talkie.cards import Card, FileBlock, TextBlock
from talkie_tui.protocol.talkie.models import OpenLink
from talkie_tui.ui.messages import DownloadRequested, OpenLinkRequested
from talkie_tui.ui.widgets import card as card_module
from talkie_tui.ui.widgets.card import CardView, FileRow, human_size, render_text_block
from talkie_tui.ui.widgets.link import ActivatableRow, LinkRow, LinkView
from talkie_tui.ui.widgets.markdown_view import MarkdownView
from tests.ui.apps.cards_app import EVERY_BLOCK, HarnessApp, screen_text

HOSTILE = "[@click=app.quit]click me[/] [b]bold?[/b]"


def card_of(**fields: Any) -> Card:
    """A card from wire fields; fallbackText defaults to 'fallback'."""
    return Card.model_validate({"fallbackText": "fallback", **fields})


def cards_app(*cards: Card) -> HarnessApp:
    """A harness showing these cards."""
    return HarnessApp(lambda: [CardView(card) for card in cards])


def lines_with(text: str, needle: str) -> list[str]:
    """The screen lines containing `needle`."""
    return [line for line in text.splitlines() if needle in line]


# --- every block ---------------------------------------------------------------------------


async def test_every_block_type_is_shown() -> None:
    app = cards_app(EVERY_BLOCK)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        text = screen_text(app)
    for shown in (
        "Alfa s.r.o.",
        "/?record=abc",  # the title's URL is visible
        "Klient · Brno",
        "Aktivní",
        "Dluh",
        "Přehled",
        "Klient od roku 2019.",
        "Schůzka 10:00",
        "Novák",
        "/?record=x",
        "Telefonát",
        "+3 more",
        "Otevřít v CRM",
        "https://crm.example.com/a",
        "Nabídka N-2026-014.pdf",
        "application/pdf · 48.2 kB",
        "Download",
    ):
        assert shown in text, shown
    # The unknown "chart" block is replaced by the fallback text, once.
    assert text.count("Alfa s.r.o. – klient v Brně, aktivní") == 1


async def test_field_values_are_aligned() -> None:
    card = card_of(
        blocks=[
            {
                "type": "fields",
                "fields": [
                    {"label": "IČO", "value": "12345678"},
                    {"label": "Obrat za rok", "value": "1,2 mil. Kč"},
                ],
            }
        ]
    )
    app = cards_app(card)
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        text = screen_text(app)
    first = lines_with(text, "12345678")[0]
    second = lines_with(text, "1,2 mil. Kč")[0]
    assert first.index("12345678") == second.index("1,2 mil. Kč")


async def test_badges_carry_their_tone() -> None:
    card = card_of(
        blocks=[
            {"type": "badge", "text": "ok", "tone": "positive"},
            {"type": "badge", "text": "hm", "tone": "warning"},
            {"type": "badge", "text": "no", "tone": "negative"},
            {"type": "badge", "text": "meh"},
        ]
    )
    app = cards_app(card)
    async with app.run_test() as pilot:
        await pilot.pause()
        badges = list(app.query(card_module.BadgeView))
        tones = [badge.block.tone for badge in badges]
        assert tones == ["positive", "warning", "negative", "neutral"]
        assert all(badge.has_class(f"-{badge.block.tone}") for badge in badges)
        colours = {badge.styles.background for badge in badges}
        assert len(colours) == 4  # every tone has its own colour


async def test_only_unknown_blocks_show_the_fallback_once() -> None:
    card = card_of(title="T", blocks=[{"type": "chart"}, {"type": "map"}, {"nonsense": 1}])
    app = cards_app(card)
    async with app.run_test() as pilot:
        await pilot.pause()
        text = screen_text(app)
    assert text.count("fallback") == 1


async def test_a_card_with_nothing_else_shows_its_fallback() -> None:
    app = cards_app(card_of())
    async with app.run_test() as pilot:
        await pilot.pause()
        assert "fallback" in screen_text(app)


async def test_more_is_not_shown_without_hidden_rows() -> None:
    card = card_of(blocks=[{"type": "list", "items": [{"title": "one"}], "more": 0}])
    app = cards_app(card)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert "more" not in screen_text(app)


# --- accessible label ----------------------------------------------------------------------


async def test_a11y_label_is_name_tooltip_and_border_title() -> None:
    """A label that says something the title does not heads the card, so it is read first."""
    app = cards_app(card_of(title="Q4 2026", a11yLabel="Sales pipeline card"))
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(CardView)
        assert view.name == "Sales pipeline card"
        assert isinstance(view.tooltip, Content)
        assert view.tooltip.plain == "Sales pipeline card"
        assert view.border_title == "Sales pipeline card"
        assert "Sales pipeline card" in screen_text(app)


async def test_a_label_that_wraps_the_title_does_not_say_it_twice() -> None:
    """Issue 10.6: "Karta klienta Alfa s.r.o." above "Alfa s.r.o." would show the name twice;
    the label stays the card's name and tooltip, the border shows no title."""
    app = cards_app(EVERY_BLOCK)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(CardView)
        assert view.name == "Karta klienta Alfa s.r.o."
        assert isinstance(view.tooltip, Content)
        assert view.tooltip.plain == "Karta klienta Alfa s.r.o."
        assert view.border_title is None
        assert "Karta klienta" not in screen_text(app)


@pytest.mark.parametrize(
    ("title", "label", "drawn"),
    [
        ("Today's meetings", "Card with today's meetings", False),
        ("Alfa s.r.o. – client card", "alfa  S.R.O.", False),  # says less: nothing to add
        ("Q4 2026", "Sales pipeline card", True),
        ("", "Card of an untitled record", True),
    ],
)
def test_the_border_title_is_drawn_only_when_the_label_says_more(
    title: str, label: str, drawn: bool
) -> None:
    view = CardView(card_of(title=title, a11yLabel=label))
    assert (view.border_title == label) is drawn
    assert view.name == label


async def test_without_a11y_label_the_title_is_the_label() -> None:
    app = cards_app(card_of(title="Plain title"))
    async with app.run_test() as pilot:
        await pilot.pause()
        view = app.query_one(CardView)
        assert view.name == "Plain title"
        assert isinstance(view.tooltip, Content)
        assert view.tooltip.plain == "Plain title"
        assert view.border_title is None  # no need to say the title twice


# --- activation ----------------------------------------------------------------------------


async def test_keyboard_reaches_and_activates_every_url() -> None:
    app = cards_app(EVERY_BLOCK)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        rows = list(app.query(ActivatableRow))
        # Title, the list row with a URL, the link and the file; the row without a URL is
        # not focusable.
        assert len(rows) == 4
        for _ in rows:
            await pilot.press("tab", "enter")
        await pilot.pause()
    opened = app.of_type(OpenLinkRequested)
    assert [(m.url, m.label) for m in opened] == [  # type: ignore[attr-defined]
        ("/?record=abc", "Alfa s.r.o."),
        ("/?record=x", "Schůzka 10:00"),
        ("https://crm.example.com/a", "Otevřít v CRM"),
    ]
    (download,) = app.of_type(DownloadRequested)
    assert isinstance(download, DownloadRequested)
    assert download.block.url == "/api/files/123.pdf"
    assert download.block.name == "Nabídka N-2026-014.pdf"


async def test_a_click_activates_a_row() -> None:
    app = cards_app(EVERY_BLOCK)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        await pilot.click(FileRow)
        await pilot.click(LinkRow, offset=(4, 0))
        await pilot.pause()
    kinds = [type(message) for message in app.posted]
    assert kinds == [DownloadRequested, OpenLinkRequested]


async def test_nothing_opens_without_a_gesture() -> None:
    app = cards_app(EVERY_BLOCK)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        await pilot.press("enter", "space", "y")
        await pilot.pause()
    assert app.posted == []


# --- untrusted text ------------------------------------------------------------------------


async def test_markup_in_server_text_is_shown_inert() -> None:
    card = card_of(
        title=HOSTILE,
        subtitle=HOSTILE,
        url="/x",
        blocks=[
            {"type": "heading", "text": HOSTILE},
            {"type": "text", "text": HOSTILE},
            {"type": "fields", "fields": [{"label": HOSTILE, "value": HOSTILE}]},
            {"type": "list", "items": [{"title": HOSTILE, "subtitle": HOSTILE}]},
            {"type": "link", "label": HOSTILE, "url": "https://e.example/[b]"},
            {"type": "file", "name": HOSTILE, "url": "/f"},
            {"type": "badge", "text": HOSTILE},
        ],
        a11yLabel=HOSTILE,
    )
    app = cards_app(card)
    quit_called: list[bool] = []
    app.action_quit = lambda: quit_called.append(True)  # type: ignore[method-assign]
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        for label in app.query(card_module.BadgeView):
            await pilot.click(label)
        await pilot.click(".card--heading")
    assert text.count("[@click=app.quit]click me[/]") >= 9
    assert "[b]bold?[/b]" in text
    assert "https://e.example/[b]" in text
    assert quit_called == []


async def test_an_uncleaned_mime_cannot_reach_the_terminal() -> None:
    # `mime` is the one card string the model does not clean: the widget must.
    block = FileBlock(name="a.pdf", mime="application/pdf\x1b]52;c;ZXZpbA==\x07\x1b[2J", url="/f")
    card = card_of(title="t", blocks=[block.model_dump(by_alias=True)])
    app = cards_app(card)
    async with app.run_test() as pilot:
        await pilot.pause()
        update = app.screen._compositor.render_update(full=True)
        raw = update.render_segments(Console(force_terminal=True, color_system="truecolor"))
    assert "application/pdf" in raw
    assert "\x1b]52" not in raw
    assert "\x1b[2J" not in raw


# --- pieces --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 kB"),
        (48211, "48.2 kB"),
        (123_456_789, "123 MB"),
        (5 * 10**15, "5000 TB"),
    ],
)
def test_human_size(size: int, shown: str) -> None:
    assert human_size(size) == shown


async def test_file_without_mime_or_size() -> None:
    card = card_of(blocks=[{"type": "file", "name": "data.bin", "url": "/f"}])
    app = cards_app(card)
    async with app.run_test() as pilot:
        await pilot.pause()
        line = lines_with(screen_text(app), "data.bin")[0]
    assert "Download" in line
    assert "·" not in line


def test_a_text_block_is_rendered_as_markdown() -> None:
    widget = render_text_block(TextBlock(text="*hello* [b]x[/b]"))
    assert widget.has_class("card--text")
    assert isinstance(widget, MarkdownView)
    assert widget.text == "*hello* [b]x[/b]"  # kept verbatim; drawn as italic + literal markup


async def test_link_view_shows_label_and_url_and_opens_on_enter() -> None:
    link = OpenLink(url="https://example.com/report", label="Report")
    app = HarnessApp(lambda: [LinkView(link)])
    async with app.run_test() as pilot:
        await pilot.pause()
        text = screen_text(app)
        await pilot.press("tab", "enter")
        await pilot.pause()
    assert "Report" in text
    assert "https://example.com/report" in text
    (message,) = app.posted
    assert isinstance(message, OpenLinkRequested)
    assert (message.url, message.label) == ("https://example.com/report", "Report")


async def test_link_view_without_label_shows_the_url_once() -> None:
    app = HarnessApp(lambda: [LinkView(OpenLink(url="https://example.com/only"))])
    async with app.run_test() as pilot:
        await pilot.pause()
        assert screen_text(app).count("https://example.com/only") == 1


# --- snapshot ------------------------------------------------------------------------------


def test_snapshot_card_with_every_block(snap_compare: Any) -> None:
    assert snap_compare(cards_app(EVERY_BLOCK), terminal_size=(80, 22))
