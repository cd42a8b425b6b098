"""Card rendering (`ui/widgets/card.py CardView`) on arbitrary cards, in one running app.

Rules (§6, DESIGN): any card the model accepts renders without an exception, and no control
character of the server reaches the rendered cells; markup in its text stays text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget

from talkie_tui.protocol.talkie.cards import Card
from talkie_tui.ui.widgets.card import CardView
from tests.fuzz.kit import CI, nasty_text, scalars, unsafe
from tests.ui.apps.cards_app import HarnessApp

pytestmark = pytest.mark.fuzz

block_types = st.sampled_from(["heading", "text", "fields", "list", "link", "file", "badge", "?"])
text = st.one_of(nasty_text, st.text(max_size=30))
blocks = st.fixed_dictionaries(
    {"type": block_types},
    optional={
        "text": text,
        "label": text,
        "url": text,
        "name": text,
        "mime": text,
        "size": st.integers(min_value=-1, max_value=10**15),
        "tone": st.sampled_from(["positive", "negative", "warning", "??"]),
        "more": st.integers(min_value=-1, max_value=10**6),
        "fields": st.lists(
            st.fixed_dictionaries({"label": text, "value": st.one_of(text, scalars)}), max_size=3
        ),
        "items": st.lists(
            st.fixed_dictionaries({"title": text}, optional={"subtitle": text, "url": text}),
            max_size=3,
        ),
    },
)
cards = st.fixed_dictionaries(
    {"fallbackText": text},
    optional={
        "title": text,
        "subtitle": text,
        "url": text,
        "a11yLabel": text,
        "blocks": st.lists(blocks, max_size=5),
    },
).map(Card.model_validate)


@pytest.fixture
async def running() -> AsyncIterator[tuple[HarnessApp, Pilot[None]]]:
    """One harness app for every example (starting an app per example would be slow)."""
    app = HarnessApp(lambda: [])
    async with app.run_test(size=(90, 60)) as pilot:
        yield app, pilot


def rendered(widget: Widget) -> list[str]:
    """The text of every cell the widget draws at its laid-out size."""
    width, height = widget.size
    if not width or not height:
        return []
    strips = widget.render_lines(Region(0, 0, width, height))
    return ["".join(segment.text for segment in strip) for strip in strips]


HOSTILE_CARD: dict[str, Any] = {
    "title": "[@click=app.quit]t\x1b[2J",
    "url": "javascript:x\x9b",
    "fallbackText": "f\x1b]52;c;eA==\x07",
    "blocks": [
        {"type": "file", "name": "n", "mime": "x\x1b[2J\x9b\x85", "url": "/f", "size": 3},
        {"type": "text", "text": "&#13;[b]x[/b]\r"},
        {"type": "?"},
    ],
}


@settings(
    max_examples=25,
    deadline=None,
    database=None,
    derandomize=CI,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(cards, min_size=1, max_size=4))
@example(batch=[Card.model_validate(HOSTILE_CARD)])
async def test_any_card_renders_with_no_control_characters(
    running: tuple[HarnessApp, Pilot[None]], batch: list[Card]
) -> None:
    """§6: cards render without failing, and no cell holds a control character."""
    app, pilot = running
    container = app.query_one("#transcript")
    views = [CardView(card) for card in batch]
    await container.mount_all(views)
    await pilot.pause()
    try:
        for view in views:
            lines = [line for widget in [view, *view.query("*")] for line in rendered(widget)]
            assert lines, "the card draws something"
            assert unsafe(*lines) == [], lines
    finally:
        await container.remove_children()
