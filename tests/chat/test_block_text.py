"""The plain-text layout of the Minara parts (`chat/block_text.py`), which the TUI's widgets,
`talkie ask` and the export all draw from: cell widths, columns fitted to 40, 80 and 120 cells,
numbers right-aligned, cuts marked with …, sparklines, and the words of the other parts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len as rich_cell_len

from talkie_tui.chat.block_text import block_lines, human_size, question_outcome, todo_lines
from talkie_tui.chat.cells import cell_len, cell_text, clip, fit, is_number, set_cell_size
from talkie_tui.chat.charts import chart_lines
from talkie_tui.chat.columns import MIN_COLUMN, kv_columns, layout_columns, table_columns

TABLE: dict[str, Any] = {
    "kind": "table",
    "columns": ["Fund", "Units", "Yield", "Remark"],
    "rows": [
        ["Global equity", 1520.75, "+7.9 %", "Rebalanced every quarter, held with two custodians"],
        ["Bonds", 800, "-0.3 %", "Short duration"],
        ["Cash", 42.5, "+3.1 %", ""],
        ["日本円", 0.162, "+12.0 %", "Yen: 東京の取引所で取引される"],
    ],
}
KV: dict[str, Any] = {
    "kind": "kv",
    "items": [
        {"label": "Account", "value": "Salary"},
        {"label": "Balance", "value": "12,480.00 USD"},
        {"label": "Last transfer and a label that goes on", "value": "2026-07-01 to Savings"},
    ],
}
DAYS = ["Mon", "Tue", "Wed", "Thu"]
CHART: dict[str, Any] = {
    "kind": "chart",
    "title": "Prices this week",
    "series": [
        {"label": "BTC", "points": [[d, 60 + i] for i, d in enumerate(DAYS)]},
        {"label": "ETH", "points": [[d, 30 - i] for i, d in enumerate(DAYS)]},
    ],
}

# --- cell widths ----------------------------------------------------------------------------

SAMPLES = [
    "plain ASCII",
    "Příliš žluťoučký kůň úpěl ďábelské ódy",
    "東京の取引所",
    "한국어 텍스트",
    "emoji 😀 and 🚀",
    "e\u0301 combining acute",
    "ZWJ family 👨\u200d👩\u200d👧",
    "tabs\tand\x07bells",
    "box ─│┤└ and bars ▁▂▃█",
    "Ω≈ç√∫ and €£¥",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_widths_agree_with_what_the_tui_draws(text: str) -> None:
    """The TUI draws with Rich: a width counted otherwise would misalign its columns."""
    assert cell_len(text) == rich_cell_len(text)


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("width", [0, 1, 3, 7, 12, 40])
def test_set_cell_size_gives_exactly_the_width(text: str, width: int) -> None:
    sized = set_cell_size(text, width)
    assert cell_len(sized) == width
    assert text.startswith(sized.rstrip(" ")) or width < cell_len(text)


def test_a_wide_character_cut_in_half_becomes_a_space() -> None:
    assert set_cell_size("東京", 3) == "東 "
    assert fit("東京の取引所", 6) == "東京 …"
    assert cell_len(fit("東京の取引所", 6)) == 6


@pytest.mark.fuzz
@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.integers(min_value=0, max_value=50), st.booleans())
def test_fit_is_always_exactly_the_width(text: str, width: int, right: bool) -> None:
    text = cell_text(text)
    fitted = fit(text, width, right=right)
    assert cell_len(fitted) == width
    if cell_len(text) > width > 0:
        assert fitted.endswith("…")
    assert cell_len(clip(text, width)) <= max(width, 0) or not text


# --- cells and numbers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (3, True),
        (0.162, True),
        ("-1,234.50", True),
        ("+2.4 %", True),
        ("$3.20", True),
        ("1 234 Kč", True),
        ("12,480.00 USD", True),
        ("2026-07-01", False),
        ("BTC", False),
        (True, False),
        (None, False),
    ],
)
def test_what_reads_as_a_number(value: Any, number: bool) -> None:
    assert is_number(value) is number


def test_cell_text_is_one_line() -> None:
    assert cell_text("two\nlines\tand  tab") == "two lines and tab"
    assert (cell_text(None), cell_text(True), cell_text(2.0), cell_text(0.5)) == (
        "",
        "true",
        "2",
        "0.5",
    )


# --- columns --------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_table_fits_every_width_and_keeps_its_columns_aligned(width: int) -> None:
    lines = block_lines("table", TABLE, width)
    assert lines, "nothing drawn"
    assert all(cell_len(line) <= width for line in lines)
    header, rule = lines[0], lines[1]
    assert header.startswith("Fund") and set(rule) <= {"─", " "}
    # Every row's column gaps fall where the rule's do: the columns are aligned.
    layout = table_columns(TABLE).layout(width)
    starts = [sum(layout.widths[:i]) + 2 * i for i in range(layout.shown)]
    for line in lines[2:6]:
        padded = set_cell_size(line, sum(layout.widths) + 2 * (layout.shown - 1))
        for start in starts[1:]:
            assert set_cell_size(padded, start)[-2:] == "  ", (width, line)


def test_at_120_nothing_is_cut_and_at_40_long_cells_are() -> None:
    wide = "\n".join(block_lines("table", TABLE, 120))
    assert "Rebalanced every quarter, held with two custodians" in wide and "…" not in wide
    narrow = block_lines("table", TABLE, 40)
    assert any("…" in line for line in narrow)
    assert all(cell_len(line) <= 40 for line in narrow)


@pytest.mark.parametrize("width", [40, 80, 120])
def test_numbers_are_right_aligned(width: int) -> None:
    lines = block_lines("table", TABLE, width)
    layout = table_columns(TABLE).layout(width)
    price_end = layout.widths[0] + 2 + layout.widths[1]
    for line, price in zip(lines[2:], ["1520.75", "800", "42.5", "0.162"], strict=True):
        assert set_cell_size(line, price_end).endswith(price), (width, line)
    assert table_columns(TABLE).numeric() == [False, True, True, False]


def test_columns_that_do_not_fit_at_all_are_left_out_and_counted() -> None:
    many = {"columns": [f"c{i}" for i in range(12)], "rows": [[f"value {i}" for i in range(12)]]}
    lines = block_lines("table", many, 40)
    assert lines[-1] == "… 5 more columns"
    assert all(cell_len(line) <= 40 for line in lines)


def test_layout_shares_the_room_and_keeps_narrow_columns_whole() -> None:
    assert layout_columns([3, 50, 50], 120).widths == (3, 50, 50)
    layout = layout_columns([3, 50, 50], 40)
    assert layout.widths[0] == 3 and sum(layout.widths) + 4 <= 40
    assert min(layout.widths[1:]) >= MIN_COLUMN


@pytest.mark.parametrize("width", [40, 80, 120])
def test_kv_labels_keep_to_their_share_and_values_align(width: int) -> None:
    lines = block_lines("kv", KV, width)
    assert len(lines) == 3 and all(cell_len(line) <= width for line in lines)
    label_width = kv_columns(KV).layout(width).widths[0]
    assert label_width <= max(MIN_COLUMN, int(width * 0.4))
    assert lines[0].startswith("Account") and lines[0].endswith("Salary")
    assert ("…" in lines[2]) is (width < 100)


def test_short_rows_and_odd_values_are_padded_not_dropped() -> None:
    lines = block_lines("table", {"columns": ["a", "b"], "rows": [["x"], "lone", ["1", None]]}, 40)
    assert [line.split() for line in lines[2:]] == [["x"], ["lone"], ["1"]]


# --- charts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_chart_is_a_title_a_sparkline_per_series_and_the_x_range(width: int) -> None:
    lines = chart_lines(CHART, width)
    assert lines[0] == "Prices this week"
    btc, eth, span = lines[1], lines[2], lines[3]
    assert btc.startswith("BTC  ▁") and btc.endswith("█  60–63")
    assert eth.startswith("ETH  █") and eth.endswith("▁  27–30")
    assert span.strip() == "Mon – Thu" and span.startswith(" " * 5)
    assert all(cell_len(line) <= width for line in lines)


def test_one_series_is_a_sparkline_too_and_no_points_says_so() -> None:
    one = {"series": [{"label": "BTC", "points": [["Mon", 1], ["Tue", 1]]}]}
    assert chart_lines(one, 40)[0].startswith("BTC  ")
    assert chart_lines({"title": "Empty", "series": [{"points": [["x", "n/a"]]}]}, 40) == [
        "Empty",
        "No data to draw.",
    ]


def test_a_long_series_is_resampled_to_fit() -> None:
    long = {"series": [{"label": "s", "points": [[str(i), i] for i in range(500)]}]}
    line = chart_lines(long, 60)[0]
    assert cell_len(line) <= 60 and line.endswith("0–499")


# --- the other parts ------------------------------------------------------------------------


def test_links_markdown_and_other_kinds() -> None:
    assert block_lines("link", {"label": "Docs", "url": "https://example.com"}, 80) == [
        "Docs: https://example.com"
    ]
    assert block_lines("link", {"label": "", "url": "https://example.com"}, 80) == [
        "Link: https://example.com"
    ]
    assert block_lines("markdown", {"text": "**Bold**\n\n- one"}, 80) == ["**Bold**", "", "- one"]
    assert block_lines("map", {"fallback_text": "A map of Prague."}, 80) == ["A map of Prague."]
    assert block_lines("hologram", {"frames": 3}, 80) == []


def test_todos_questions_and_sizes_in_words() -> None:
    assert todo_lines([("Check", True), ("Write", False)]) == [
        "To do · 1 of 2 done",
        "☑ Check",
        "☐ Write",
    ]
    assert [question_outcome(o) for o in (None, "answered", "timeout", "cancelled", "odd")] == [
        "Open",
        "Answered",
        "Timed out",
        "Cancelled",
        "Closed",
    ]
    # The answer given here goes with "answered" only: a timeout says nothing of it.
    assert question_outcome("answered", "Confirm") == "Answered “Confirm”"
    assert question_outcome("timeout", "Confirm") == "Timed out"
    assert [human_size(n) for n in (512, 48213, 3_100_000, 250_000_000)] == [
        "512 B",
        "48.2 kB",
        "3.1 MB",
        "250 MB",
    ]
