"""The chat screen end to end: the real reference server over HTTP on 127.0.0.1, driven by Pilot."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button

from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.help import HelpScreen
from talkie_tui.ui.widgets.action_card import ActionCard
from talkie_tui.ui.widgets.card import CardView
from talkie_tui.ui.widgets.markdown_view import MarkdownView
from talkie_tui.ui.widgets.notice import NoticeView
from talkie_tui.ui.widgets.thread_list import ThreadList
from talkie_tui.ui.widgets.transcript import TurnView
from tests.helpers import TEST_TOKEN
from tests.stub_server import CuttingProxy
from tests.ui.flows import FAST, chat_screen, make_app, screen_text, send, until

Flow = Callable[[TalkieApp, Pilot[None]], Awaitable[None]]


def visible_text(screen: ChatScreen) -> str:
    """The plain text of every mounted turn, as the terminal shows it."""
    lines = []
    for view in screen.transcript.query(TurnView):
        for widget in view.query("*"):
            if isinstance(widget, MarkdownView):
                lines.append(widget.text)
    return "\n".join(lines)


async def server_client(url: str) -> TalkieClient:
    return await TalkieClient.connect(url, tokens=StaticToken(TEST_TOKEN))


async def test_echo_streams_into_the_transcript(devserver, tmp_path: Path) -> None:
    """Connect, type, Enter: the answer appears and the turn ends `done`."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        assert screen.header._server_name == "Talkie Demo CRM"
        await send(pilot, screen, "talkie-test:echo Dobrý den, světe")
        user, answer = screen.session.conversation.turns
        assert (user.text, answer.text, answer.state) == (
            "talkie-test:echo Dobrý den, světe",
            "Dobrý den, světe",
            "done",
        )
        assert "Dobrý den, světe" in visible_text(screen)
        assert screen.composer.text == ""


async def test_a_streamed_answer_reads_the_conversation_a_few_times_not_per_delta(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text deltas change only text: the screen's state is read again on a timer, not after
    each of them, and once more when the answer ends."""
    from talkie_tui.devserver.common.long_answer import long_answer

    reads: list[str] = []
    show_state = ChatScreen.show_state

    def counting(self: ChatScreen) -> None:
        reads.append(self.header.state)
        show_state(self)

    monkeypatch.setattr(ChatScreen, "show_state", counting)
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        reads.clear()
        await send(pilot, screen, "talkie-test:markdown 600 2000 5")
        assert screen.session.conversation.turns[-1].text == long_answer(600, 5)
        # Per delta would be 600 reads or more; the timer reads ten a second, and a loaded
        # machine may take several seconds over what a quiet one does in 0.3 s.
        assert len(reads) < 150
        assert screen.header.state == "connected"


async def test_card_shows_its_fields(devserver, tmp_path: Path) -> None:
    """talkie-test:card: the tool status, then a card with its fields block."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:card")
        await pilot.pause()
        assert len(screen.transcript.query(CardView)) == 1
        assert "TEST-0001" in screen_text(app)


async def test_action_confirmed_from_the_keyboard_is_done_on_the_server(
    devserver, tmp_path: Path
) -> None:
    """An action waits for a deliberate key: after the guard, focus it and press y."""
    url = devserver(**FAST)
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:action")
        card = screen.transcript.query_one(ActionCard)
        assert screen.header.pending_actions == 1
        await pilot.pause(0.8)  # past the input guard
        assert screen.focused is screen.composer  # the card waits: nothing takes the focus
        await pilot.press("ctrl+o")  # focus the pending action
        assert card.has_focus_within
        await pilot.press("y")
        await until(pilot, lambda: card.action.status == "done")
        assert screen.header.pending_actions == 0
        action_id = card.action.id
    async with await server_client(url) as client:
        assert (await client.action(action_id)).status == "done"


async def test_a_key_in_flight_when_the_action_appears_does_not_decide(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """y and Enter arriving right after the card appears (even focused on it) are ignored."""
    # A longer guard keeps the window open on a loaded machine; the 0.7 s default is
    # checked with the real clock in test_action_card.py.
    monkeypatch.setattr(ActionCard, "guard_seconds", 2.0)
    url = devserver(**FAST)
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.insert("talkie-test:action")
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.transcript.query(ActionCard)), timeout=10)
        card = screen.transcript.query_one(ActionCard)
        card.focus()  # even focused, keys already on their way must not decide
        pressed = 0
        while card.guard_left > 0.3:  # every key sent now is handled inside the guard
            await pilot.press("y" if pressed % 2 else "enter")
            pressed += 1
        await pilot.pause(0.3)
        assert pressed >= 1
        assert card.action.status == "pending"
        action_id = card.action.id
    async with await server_client(url) as client:
        assert (await client.action(action_id)).status == "pending"


async def test_typing_while_an_action_appears_stays_in_the_composer(
    devserver, tmp_path: Path
) -> None:
    """A card never steals focus from a composer holding text."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:action")
        screen.composer.focus()
        await pilot.press("y", "e", "s")
        assert screen.focused is screen.composer
        assert screen.composer.text == "yes"
        assert screen.transcript.query_one(ActionCard).action.status == "pending"


async def test_run_error_shows_the_server_message_and_retry(devserver, tmp_path: Path) -> None:
    """RUN_ERROR: the server's words, the code, and a Retry that sends the same message id."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:error")
        await until(pilot, lambda: bool(screen.transcript.query(NoticeView)))
        notice = screen.transcript.query_one(NoticeView)
        assert notice.part.code == "upstream_unavailable" and notice.part.retryable
        message_id = screen.session.conversation.turns[0].id
        failed = screen.session.conversation.turns[1]
        notice.query_one(Button).press()
        await until(
            pilot,
            lambda: (
                screen.session.conversation.turns[-1] is not failed
                and not screen.answering
                and bool(screen.transcript.query(NoticeView))
            ),
        )
        turns = screen.session.conversation.turns
        # The new answer (failing again) in the failed one's place, as the server keeps it.
        assert [t.role for t in turns] == ["user", "assistant"]
        assert turns[0].id == message_id
        await until(pilot, lambda: len(screen.transcript.query(NoticeView)) == 1)


async def test_escape_cancels_the_running_answer(devserver, tmp_path: Path) -> None:
    """Esc sends cancelRun; the answer ends as stopped, with what arrived so far."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.insert("talkie-test:slow")
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.session.conversation.turns) == 2)
        await until(pilot, lambda: bool(screen.session.conversation.turns[1].text))
        await pilot.press("escape")
        await until(pilot, lambda: not screen.answering)
        answer = screen.session.conversation.turns[1]
        assert answer.state == "cancelled"
        assert "Stopped." in str(screen.transcript.turn_view(answer)._state_note.render())


async def test_a_dropped_stream_reconnects_and_recovers_the_answer(
    devserver, tmp_path: Path
) -> None:
    """The stream breaks mid-answer: "reconnecting", then the full answer from the thread."""
    url = devserver(**{**FAST, "slow_seconds": 1.5})
    async with CuttingProxy(url) as proxy:
        app = make_app(proxy.origin, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = await chat_screen(app, pilot)
            states: list[str] = []
            screen.header.watch(
                screen.header, "state", lambda state: states.append(state), init=False
            )
            screen.composer.insert("talkie-test:slow")
            await pilot.press("enter")
            await until(pilot, lambda: "reconnecting" in states, timeout=10)
            await until(pilot, lambda: not screen.answering, timeout=30)
            _, answer = screen.session.conversation.turns
            assert answer.state == "done" and len(answer.text) > 20
            # The recovered thread replaces the views of the partial answer: mounting takes a
            # moment on a loaded machine.
            await until(pilot, lambda: answer.text in visible_text(screen))
    assert proxy.cuts == 1


async def test_server_text_with_escapes_and_markup_is_inert(devserver, tmp_path: Path) -> None:
    """Escape sequences never reach the terminal; markup is shown as characters, not run."""
    hostile = "[@click=app.quit]quit[/] [b]bold[/b] \x1b]52;c;aGk=\x07 \x1b[2J end"
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, f"talkie-test:echo {hostile}")
        text = visible_text(screen)
        assert "[@click=app.quit]quit[/] [b]bold[/b]" in text
        assert "\x1b" not in text and "\x07" not in text
        assert "[@click=app.quit]quit[/] [b]bold[/b]" in screen_text(app)
        await pilot.click(MarkdownView)
        assert app.is_running


async def test_the_counter_prevents_a_413(devserver, tmp_path: Path) -> None:
    """Over `limits.maxMessageChars` Enter does not send, and the text stays."""
    app = make_app(devserver(**{**FAST, "max_message_chars": 20}), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.insert("x" * 21)
        await pilot.pause()
        assert screen.composer.border_subtitle == "21 / 20"
        assert screen.composer.has_class("-over-limit")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.session.conversation.turns == []
        assert screen.composer.text == "x" * 21


async def test_newline_key_adds_a_line_and_enter_sends(devserver, tmp_path: Path) -> None:
    """Ctrl+J is a newline; Enter sends the whole message."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.focus()
        await pilot.press("a", "ctrl+j", "b")
        assert screen.composer.text == "a\nb"


async def two_threads(
    pilot: Pilot[None], screen: ChatScreen, second: str
) -> tuple[str, ThreadList]:
    """Send in a first thread, then `second` in a new one; the first's id and the list of two."""
    await send(pilot, screen, "talkie-test:echo first thread")
    first_thread = screen.session.thread_id
    assert first_thread is not None
    await pilot.press("ctrl+n")
    await send(pilot, screen, second)
    thread_list = screen.query_one(ThreadList)
    await until(pilot, lambda: len(thread_list.threads) == 2)
    return first_thread, thread_list


async def test_threads_list_open_and_delete(devserver, tmp_path: Path) -> None:
    """Threads: newest first; opening one shows its history; delete asks first."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        first_thread, thread_list = await two_threads(pilot, screen, "talkie-test:card")
        assert thread_list.threads[0].title == "talkie-test:card"

        thread_list.post_message(ThreadList.Selected(thread_list, first_thread))
        await until(pilot, lambda: screen.session.thread_id == first_thread)
        await pilot.pause()
        assert [t.text for t in screen.session.conversation.turns] == [
            "talkie-test:echo first thread",
            "first thread",
        ]
        assert "first thread" in visible_text(screen)

        thread_list.post_message(ThreadList.DeleteRequested(thread_list, first_thread))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        app.screen.dismiss(True)
        await until(pilot, lambda: len(thread_list.threads) == 1)
        assert screen.session.conversation.turns == []


async def test_history_renders_through_the_same_path(devserver, tmp_path: Path) -> None:
    """A thread loaded again shows the same cards and actions as when it streamed."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:card")
        await send(pilot, screen, "talkie-test:action")
        thread = screen.session.thread_id
        live = (len(screen.transcript.query(CardView)), len(screen.transcript.query(ActionCard)))
        await pilot.press("ctrl+n")
        screen.open_thread(thread)
        await until(pilot, lambda: screen.session.thread_id == thread)
        await pilot.pause()
        again = (len(screen.transcript.query(CardView)), len(screen.transcript.query(ActionCard)))
        assert live == again == (1, 1)


async def test_file_block_downloads_with_the_token(devserver, tmp_path: Path) -> None:
    """A same-origin file block is saved in the downloads folder."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "show offer N-2026-014")
        from talkie_tui.protocol.talkie.cards import FileBlock

        blocks = [
            block
            for card in screen.transcript.query(CardView)
            for block in card.card.blocks
            if isinstance(block, FileBlock)
        ]
        assert blocks, "the demo offer card has a file block"
        screen.download(blocks[0])
        downloads = tmp_path / "downloads"
        await until(pilot, lambda: downloads.exists() and any(downloads.iterdir()))
        await until(
            pilot, lambda: not any(w.group == "downloads" and w.is_running for w in screen.workers)
        )
        saved = next(downloads.iterdir())
        assert saved.read_bytes().startswith(b"%PDF")


async def test_links_open_only_https_or_same_origin(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link opens on a gesture, and only https: or the server's own origin."""
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, new=0: opened.append(url) or True)
    monkeypatch.setattr("talkie_tui.browser.graphical_browser_available", lambda: True)
    url = devserver(**FAST)
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        from talkie_tui.ui.messages import OpenLinkRequested

        for link in ["/crm/x", "https://example.org/y", "javascript:alert(1)", "http://evil.test/"]:
            screen.post_message(OpenLinkRequested(link))
        await pilot.pause()
        assert opened == [f"{url}/crm/x", "https://example.org/y"]


async def test_without_a_browser_the_link_is_copied(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over SSH (no display) no browser is started: the URL goes to the clipboard."""
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, new=0: opened.append(url) or True)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        from talkie_tui.ui.messages import OpenLinkRequested

        screen.post_message(OpenLinkRequested("https://example.org/report"))
        await pilot.pause()
        assert opened == []
        assert app.clipboard == "https://example.org/report"


async def test_export_writes_markdown(devserver, tmp_path: Path) -> None:
    """Export: the thread as a Markdown file in the downloads folder."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:card")
        await pilot.press("ctrl+s")
        files = list((tmp_path / "downloads").glob("*.md"))
        assert len(files) == 1
        text = files[0].read_text()
        assert "## You" in text and "talkie-test:card" in text and "TEST-0001" in text


async def test_help_lists_the_bindings(devserver, tmp_path: Path) -> None:
    """F1 shows every binding."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await chat_screen(app, pilot)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_small_and_large_terminals(devserver, tmp_path: Path, size: tuple[int, int]) -> None:
    """The chat works in 80x24 and in a large terminal."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=size) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:card")
        assert screen.composer.region.height >= 3
        assert screen.composer.region.bottom <= size[1]


async def test_links_and_code_can_be_picked_from_the_keyboard(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+G lists links (Enter opens) and code blocks (Enter copies)."""
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, new=0: opened.append(url) or True)
    monkeypatch.setattr("talkie_tui.browser.graphical_browser_available", lambda: True)
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await send(pilot, screen, "talkie-test:echo See [docs](https://example.org/d) and `x`")
        await pilot.press("ctrl+g")
        from talkie_tui.ui.screens.picker import PickerScreen

        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        assert [item.kind for item in app.screen.items] == ["link", "answer"]
        await pilot.press("enter")
        await pilot.pause()
        assert opened == ["https://example.org/d"]
        await send(pilot, screen, "talkie-test:echo ```\nprint(1)\n```")
        await pilot.press("ctrl+g")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press("enter")
        await pilot.pause()
        assert app.clipboard == "print(1)"


async def confirm_the_offer(pilot: Pilot[None], screen: ChatScreen) -> ActionCard:
    """Ask the demo agent to send the offer and confirm it: the e-mail's undo window starts."""
    await send(pilot, screen, "send the offer to Alfa")
    card = screen.transcript.query_one(ActionCard)
    await until(pilot, lambda: not card.is_guarded)
    card.focus()
    await pilot.press("y")
    # Decided: running its undo window, or (on a loaded machine, a short window) already done.
    await until(pilot, lambda: card.action.status in ("running", "done"))
    return card


async def test_confirmed_e_mail_can_be_undone_then_ends_done(devserver, tmp_path: Path) -> None:
    """An outbound action runs with an Undo countdown; afterwards the card shows done."""
    # A window long enough to be still open when the card is read on a loaded machine.
    app = make_app(devserver(**{**FAST, "undo_seconds": 4.0}), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        card = await confirm_the_offer(pilot, screen)
        assert card.can_undo
        await until(pilot, lambda: card.action.status == "done", timeout=30)


async def test_the_result_of_an_undo_window_shows_when_it_ends(devserver, tmp_path: Path) -> None:
    """The server posts what the sent e-mail produced into the thread: it shows without a reload."""
    # A window long enough to be still open when the screen is read on a loaded machine.
    app = make_app(devserver(**{**FAST, "undo_seconds": 3.0}), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await confirm_the_offer(pilot, screen)
        assert "Offer sent" not in screen_text(app)
        await until(pilot, lambda: "Offer sent" in screen_text(app), timeout=15)
        done = screen.transcript.query_one(ActionCard)
        assert done.action.status == "done"


async def test_a_message_the_server_refused_stays_with_retry(tmp_path: Path) -> None:
    """A send that fails before the stream keeps the message, the server's words and Retry."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tests.stub_server import StubServer, talkie_app

    async def refuse(request: Request) -> JSONResponse:
        error = {"code": "forbidden", "message": "Chat is off for you.", "retryable": False}
        return JSONResponse({"error": error}, status_code=403)

    server = StubServer(talkie_app([Route("/api/talkie/run", refuse, methods=["POST"])])).start()
    try:
        app = make_app(server.origin, tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
            screen = app.screen
            assert isinstance(screen, ChatScreen)
            await until(pilot, lambda: bool(screen.query("#composer")))
            screen.composer.insert("keep me")
            await pilot.press("enter")
            await until(pilot, lambda: bool(screen.transcript.query(NoticeView)))
            user = screen.session.conversation.turns[0]
            assert (user.text, user.state) == ("keep me", "failed")
            assert "Chat is off for you." in screen_text(app)
            assert screen.transcript.turn_view(user) is not None
            assert screen.transcript.query_one(NoticeView).query(Button)
    finally:
        server.stop()


async def test_an_unexpected_failure_in_background_work_does_not_crash(
    devserver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug-shaped exception in a worker is reported; the app and the chat keep working."""

    async def broken(self: TalkieClient) -> None:
        raise ValueError("an unexpected shape")

    monkeypatch.setattr(TalkieClient, "threads", broken)
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        screen = await chat_screen(app, pilot)
        await until(
            pilot, lambda: any("unexpected shape" in str(n.message) for n in app._notifications)
        )
        await send(pilot, screen, "talkie-test:echo still here")
        assert app.is_running
        assert screen.session.conversation.turns[-1].text == "still here"


async def test_a_thread_opened_from_the_list_takes_what_is_typed_next(
    devserver: Callable[..., str], tmp_path: Path
) -> None:
    """Ctrl+B, an arrow, Enter: the thread opens and the cursor is in its composer, so the
    words typed next are the person's message, not the list's keys (n, /, Delete)."""
    app = make_app(devserver(**FAST), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        first_thread, thread_list = await two_threads(pilot, screen, "talkie-test:echo second")
        await pilot.press("ctrl+b", "down", "enter")
        await until(pilot, lambda: screen.session.thread_id == first_thread)
        await until(pilot, lambda: screen.composer.has_focus)
        await pilot.press(*"and now", "enter")
        await until(pilot, lambda: screen.session.conversation.turns[-2].text == "and now")
        assert len(thread_list.threads) == 2  # no n made a new thread


async def test_ctrl_b_goes_to_the_thread_list_and_back(devserver, tmp_path: Path) -> None:
    """Ctrl+B: to the thread list (shown if hidden); from it, hide it, back to the box."""
    url = devserver(test_mode=True, dev_token=TEST_TOKEN)
    app = make_app(url, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await chat_screen(app, pilot)
        sidebar = screen.query_one("#sidebar")
        await pilot.press("ctrl+b")
        assert sidebar.display and sidebar.has_focus_within
        await pilot.press("ctrl+b")
        assert not sidebar.display and screen.composer.has_focus
        await pilot.press("ctrl+b")
        assert sidebar.display and sidebar.has_focus_within


async def test_a_new_thread_started_while_one_loads_is_not_replaced_by_it(tmp_path: Path) -> None:
    """Ctrl+N while the thread given to open still loads: the new thread stays on screen, and
    the late thread does not come over it when it arrives (nor does Ctrl+N say to stop an
    answer: nothing was answering)."""
    import asyncio
    import threading

    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tests.stub_server import StubServer, talkie_app

    asked, release = threading.Event(), threading.Event()

    async def slow_thread(request: Request) -> JSONResponse:
        asked.set()
        await asyncio.to_thread(release.wait, 30)
        message = {"id": "m1", "role": "user", "content": "from the late thread"}
        thread = {"id": "t_late", "title": "Late"}
        return JSONResponse({"thread": thread, "messages": [message], "actions": []})

    server = StubServer(talkie_app([Route("/api/talkie/threads/{thread_id}", slow_thread)]))
    server.start()
    try:
        app = make_app(server.origin, tmp_path, thread_id="t_late")
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
            screen = app.screen
            assert isinstance(screen, ChatScreen)
            await until(pilot, asked.is_set)
            await pilot.press("ctrl+n")
            await until(pilot, lambda: not screen.answering)
            release.set()
            await pilot.pause(0.5)  # the late answer would have been shown by now
            assert screen.session.thread_id is None
            assert "from the late thread" not in screen_text(app)
            assert not any("Stop the answer" in str(n.message) for n in app._notifications)
    finally:
        release.set()
        server.stop()
