"""The thread list asks a server that searches: a pause in typing, the hits with snippets, and
Enter opens the thread at the message found."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.message import Message

from talkie_tui.backends.base import SearchHit
from talkie_tui.ui.widgets.thread_list import SEARCH_DELAY, ThreadList
from talkie_tui.ui.widgets.thread_rows import snippet_content
from tests.ui.apps.thread_list_app import NOW, ThreadListApp, sample_threads

HITS = [
    SearchHit("s1", "m7", "Weekly swap plan", "…then «swap» 100 USDC to ETH on Friday…"),
    SearchHit("s2", "m2", "[b]Markup[/b]", "a «[@click=app.quit]swap[/]» that is plain"),
]


class SearchApp(ThreadListApp):
    """A searchable ThreadList that records the searches it asks for."""

    def compose(self) -> ComposeResult:
        yield ThreadList(self.initial_threads, now=lambda: NOW, searchable=True, id="threads")

    @on(ThreadList.SearchRequested)
    def _searched(self, event: Message) -> None:
        self.posted.append(event)


def searches(app: SearchApp) -> list[str]:
    return [m.query for m in app.posted if isinstance(m, ThreadList.SearchRequested)]


def option_texts(thread_list: ThreadList) -> list[str]:
    options = thread_list.options
    texts = []
    for index in range(options.option_count):
        prompt = options.get_option_at_index(index).prompt
        parts = getattr(prompt, "parts", None)
        texts.append(str(parts()[0]) if parts is not None else str(prompt))
    return texts


def test_snippet_marks_become_bold_and_the_rest_stays_plain() -> None:
    content = snippet_content("a «swap»\nand «[b]x[/b]» and «open")
    assert content.plain == "a swap and [b]x[/b] and open"
    bold = [content.plain[span.start : span.end] for span in content.spans]
    assert bold == ["swap", "[b]x[/b]", "open"]


async def test_the_server_is_asked_once_the_typing_pauses() -> None:
    app = SearchApp(sample_threads())
    async with app.run_test() as pilot:
        thread_list = app.thread_list
        thread_list.filter_input.focus()
        await pilot.press("s", "w", "a", "p")
        await pilot.pause()
        assert searches(app) == []  # not on every key
        assert "Searching the messages…" in option_texts(thread_list)
        await pilot.pause(SEARCH_DELAY + 0.2)
        assert searches(app) == ["swap"]


async def test_one_letter_is_filtered_here_and_never_sent() -> None:
    app = SearchApp(sample_threads())
    async with app.run_test() as pilot:
        app.thread_list.filter_input.focus()
        await pilot.press("s")
        await pilot.pause(SEARCH_DELAY + 0.2)
        assert searches(app) == []


async def test_hits_are_shown_and_enter_opens_the_message_found() -> None:
    app = SearchApp(sample_threads())
    async with app.run_test() as pilot:
        thread_list = app.thread_list
        thread_list.filter_input.value = "swap"
        await pilot.pause()
        thread_list.show_hits("swap", HITS)
        await pilot.pause()
        texts = option_texts(thread_list)
        assert any("Weekly swap plan" in text and "then swap 100 USDC" in text for text in texts)
        assert any("[@click=app.quit]swap[/]" in text for text in texts)  # literal, not markup
        # No thread title has "swap": Enter in the box opens the best message match.
        await pilot.press("enter")
        await pilot.pause()
        selected = [m for m in app.posted if isinstance(m, ThreadList.Selected)]
        assert [(m.thread_id, m.message_id) for m in selected] == [("s1", "m7")]


async def test_a_hit_is_opened_from_the_list_too() -> None:
    app = SearchApp(sample_threads())
    async with app.run_test() as pilot:
        thread_list = app.thread_list
        thread_list.filter_input.value = "swap"
        await pilot.pause()
        thread_list.show_hits("swap", HITS)
        await pilot.pause()
        thread_list.options.focus()
        options = thread_list.options
        hit_index = next(
            i for i in range(options.option_count) if options.get_option_at_index(i).id == "hit:1"
        )
        options.highlighted = hit_index
        await pilot.press("enter")
        await pilot.pause()
        selected = [m for m in app.posted if isinstance(m, ThreadList.Selected)]
        assert [(m.thread_id, m.message_id) for m in selected] == [("s2", "m2")]


async def test_late_results_of_an_older_query_are_dropped() -> None:
    app = SearchApp(sample_threads())
    async with app.run_test() as pilot:
        thread_list = app.thread_list
        thread_list.filter_input.value = "swap more"
        await pilot.pause()
        thread_list.show_hits("swap", HITS)
        await pilot.pause()
        assert thread_list.hits == []
        assert "Searching the messages…" in option_texts(thread_list)


async def test_a_failed_search_says_why_and_the_titles_still_filter() -> None:
    app = SearchApp(sample_threads())
    async with app.run_test() as pilot:
        thread_list = app.thread_list
        thread_list.filter_input.value = "novak"
        await pilot.pause()
        thread_list.show_hits("novak", "The server could not search: boom")
        await pilot.pause()
        assert thread_list.visible_thread_ids == ["t0"]
        assert "The server could not search: boom" in option_texts(thread_list)
