"""When the network or another client gets in the way, end to end: the real app on the reference
gateway, through `GatewayProxy` where the network itself must fail. A message that did not get
through is sent again with Retry under the same `client_message_id`; a message sent into a turn
that ended meanwhile (409) goes as the next turn; an answer to a question the gateway no longer
waits for (404 `not_pending`) closes it quietly, "answered elsewhere" or "timed out"."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Button

from talkie_tui.chat.turns import InterjectionPart, NoticePart
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.widgets.notice import NoticeView
from talkie_tui.ui.widgets.question import QuestionView
from tests.ui.minara_e2e import (
    SIZE,
    WAIT,
    GatewayProxy,
    answer_text,
    ask,
    chat,
    gateway_app,
    gateway_http,
    notices,
    say,
    screen_text,
    session_done,
    until,
)

pytestmark = pytest.mark.slow

SEND = "POST /v1/chat/stream"
INTERJECT = "POST /v1/chat/interject"
ECHOED = "sent again, answered once"


def user_texts(screen: ChatScreen) -> list[str]:
    """The person's messages in the conversation on screen, in order."""
    return [turn.text for turn in screen.session.conversation.turns if turn.role == "user"]


def button(view: QuestionView, label: str) -> Button:
    """The button of `view` labelled `label`."""
    return next(b for b in view.query(Button) if b.label.plain == label)


def answering(question: QuestionView) -> str:
    """What the proxy notes for an answer to `question`."""
    return f"POST /v1/interactions/{question.part.question_id}/answer"


async def retry_after_failure(pilot: Pilot[None], screen: ChatScreen, gateway_url: str) -> None:
    """Send the echo, see it fail with Retry, press Retry; the gateway has it once, under the
    id it had when it failed, and the app shows one message and its answer."""
    await say(pilot, screen, f"minara-test:echo {ECHOED}", wait=False)
    await until(pilot, lambda: bool(screen.transcript.query(NoticeView)), WAIT)
    user = screen.session.conversation.turns[0]
    assert user.state == "failed" and not screen.answering
    message_id = user.id
    notice = screen.transcript.query_one(NoticeView)
    assert notice.part.kind == "not_delivered" and notice.part.retryable
    await pilot.click(notice.query_one(".notice--retry-button", Button))
    await until(pilot, lambda: answer_text(screen) == ECHOED and not screen.answering, WAIT)
    turns = screen.session.conversation.turns
    assert [(t.role, t.id) for t in turns][:1] == [("user", message_id)]
    assert [t.role for t in turns] == ["user", "assistant"] and user.state == "done"
    assert not any(isinstance(p, NoticePart) for p in user.parts)  # delivered: no Retry left
    assert not screen.transcript.query(NoticeView)
    async with gateway_http(gateway_url) as http:
        rows = (await session_done(http, screen.session.thread_id or "", 2))["messages"]
    assert [(row["role"], row["content"]) for row in rows] == [
        ("user", f"minara-test:echo {ECHOED}"),
        ("assistant", ECHOED),
    ]
    assert rows[0]["id"] == message_id  # the client_message_id the first try carried


# --- a message that could not be sent -------------------------------------------------------


async def test_a_message_that_never_reached_the_gateway_is_sent_again_with_retry(
    gateway_url: str, tmp_path: Path
) -> None:
    async with GatewayProxy(gateway_url) as proxy:
        app = await gateway_app(proxy.origin, tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            screen = await chat(app, pilot)
            proxy.lose_request(SEND)
            await retry_after_failure(pilot, screen, gateway_url)
            assert proxy.lost == [SEND] and proxy.requests(SEND) == [200]


async def test_a_message_whose_answer_was_lost_is_sent_again_without_a_second_turn(
    gateway_url: str, tmp_path: Path
) -> None:
    async with GatewayProxy(gateway_url) as proxy:
        app = await gateway_app(proxy.origin, tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            screen = await chat(app, pilot)
            proxy.lose_answer(SEND)  # the gateway takes it and starts the turn; no word back
            await retry_after_failure(pilot, screen, gateway_url)
            assert proxy.requests(SEND) == [200, 200]  # both reached the gateway: one turn


async def test_retry_after_the_agent_failed_asks_again_as_a_new_message(
    gateway_url: str, tmp_path: Path
) -> None:
    """The gateway stored the message and its failed answer: under the same id it would start
    no turn, so Retry sends the text as a new message, and the agent answers it."""
    app = await gateway_app(gateway_url, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat(app, pilot)
        await say(pilot, screen, "minara-test:error")
        notice = screen.transcript.query_one(NoticeView)
        assert notice.part.kind == "failed" and notice.part.retryable
        await pilot.click(notice.query_one(".notice--retry-button", Button))
        await until(pilot, lambda: len(screen.session.conversation.turns) == 4, WAIT)
        await until(pilot, lambda: not screen.answering, WAIT)
        turns = screen.session.conversation.turns
        assert [(t.role, t.state) for t in turns] == [
            ("user", "done"),
            ("assistant", "error"),
            ("user", "done"),
            ("assistant", "error"),  # this script always fails: but it was asked, and answered
        ]
        assert turns[0].id != turns[2].id and turns[2].text == "minara-test:error"
        async with gateway_http(gateway_url) as http:
            rows = (await session_done(http, screen.session.thread_id or "", 4))["messages"]
        assert [row["id"] for row in rows if row["role"] == "user"] == [turns[0].id, turns[2].id]


# --- a message sent as the turn ended -------------------------------------------------------


async def test_a_message_sent_into_a_turn_that_had_ended_goes_as_the_next_turn(
    gateway_url: str, tmp_path: Path
) -> None:
    async with GatewayProxy(gateway_url) as proxy:
        app = await gateway_app(proxy.origin, tmp_path)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = await chat(app, pilot)
            proxy.pause_sockets()  # the turn's events are still on their way to the app
            await say(pilot, screen, "minara-test:count 10 20", wait=False)
            await until(pilot, lambda: screen.session.thread_id is not None, WAIT)
            async with gateway_http(gateway_url) as http:
                session_id = screen.session.thread_id or ""
                await session_done(http, session_id, 2)  # while it ended on the gateway
                assert screen.answering and answer_text(screen) == ""
                screen.composer.focus()
                screen.composer.insert("minara-test:echo after the turn")
                await pilot.press("enter")  # into the running answer, as far as the app knows
                await until(pilot, lambda: proxy.requests(INTERJECT) == [409], WAIT)
                await until(
                    pilot, lambda: screen.steering.waiting == ["minara-test:echo after the turn"]
                )
                assert user_texts(screen) == ["minara-test:count 10 20"]  # kept until the end
                proxy.resume_sockets()
                await until(pilot, lambda: len(user_texts(screen)) == 2, WAIT)
                await until(
                    pilot, lambda: not screen.answering and not screen.steering.waiting, WAIT
                )
                rows = (await session_done(http, session_id, 4))["messages"]
            counted = "".join(f"{n} " for n in range(1, 11))
            turns = screen.session.conversation.turns
            assert [t.text for t in turns] == [
                "minara-test:count 10 20",
                counted,
                "minara-test:echo after the turn",
                "after the turn",
            ]
            assert not any(isinstance(p, InterjectionPart) for p in turns[1].parts)
            assert [(row["role"], row["content"]) for row in rows] == [
                ("user", "minara-test:count 10 20"),
                ("assistant", counted),
                ("user", "minara-test:echo after the turn"),
                ("assistant", "after the turn"),
            ]
            assert proxy.requests(INTERJECT) == [409]  # tried once, then sent as a message
            assert "Could not send it into the answer" not in notices(app)


# --- an answer to a question that waits no more ----------------------------------------------


async def test_an_answer_to_a_question_answered_in_another_client_closes_it_quietly(
    gateway_url: str, tmp_path: Path
) -> None:
    async with GatewayProxy(gateway_url) as proxy:
        app = await gateway_app(proxy.origin, tmp_path)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = await chat(app, pilot)
            view = await ask(pilot, screen, "select")
            proxy.pause_sockets()  # the app does not hear of the other client's answer yet
            async with gateway_http(gateway_url) as http:
                answer = {"answers": [{"questionIndex": 0, "selected_labels": ["Travel"]}]}
                posted = await http.post(
                    f"/v1/interactions/{view.part.question_id}/answer", json=answer
                )
                assert posted.status_code == 200, posted.text
                await session_done(http, screen.session.thread_id or "", 2)
            await pilot.click(button(view, "Savings"))
            await until(pilot, lambda: not view.is_open, WAIT)
            assert proxy.requests(answering(view)) == [404]
            assert view.part.outcome == "elsewhere"
            await until(pilot, lambda: "Answered elsewhere · Which account?" in screen_text(app))
            assert "did not go through" not in screen_text(app)  # no error: nothing to do
            assert not notices(app)
            assert app.focused is screen.composer
            proxy.resume_sockets()
            await until(pilot, lambda: not screen.answering, WAIT)
            assert answer_text(screen) == "Asking.Answer: Travel"  # the other client's
            assert not view.is_open and not notices(app)


async def test_an_answer_that_arrives_after_the_question_expired_says_timed_out(
    gateway_url: str, tmp_path: Path
) -> None:
    async with GatewayProxy(gateway_url) as proxy:
        app = await gateway_app(proxy.origin, tmp_path)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            screen = await chat(app, pilot)
            view = await ask(pilot, screen, "select 2")  # open for two seconds
            assert view.is_open and not view.locally_expired
            proxy.pause_sockets()
            proxy.hold_requests("POST /v1/interactions/")  # a slow network: the answer waits
            await pilot.click(button(view, "Savings"))
            await until(pilot, lambda: view.is_busy, WAIT)
            async with gateway_http(gateway_url) as http:
                detail = await session_done(http, screen.session.thread_id or "", 2)
            assert detail["pending_questions"] == []  # it timed out on the gateway
            proxy.release_requests()
            await until(pilot, lambda: not view.is_open, WAIT)
            assert proxy.requests(answering(view)) == [404]
            assert view.part.outcome == "timeout"
            await until(pilot, lambda: "Timed out · Which account?" in screen_text(app))
            assert "did not go through" not in screen_text(app)
            assert not notices(app)
            proxy.resume_sockets()
            await until(pilot, lambda: not screen.answering, WAIT)
            assert answer_text(screen) == "Asking.No answer: timed out."
            assert view.part.outcome == "timeout" and not notices(app)
