"""TalkieSession: nothing the person typed is lost (failed sends keep the turn and retry with the
same id) and a lost stream is recovered from the thread (§5 "disconnect is not cancel")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from talkie_tui.backends.base import Recovered
from talkie_tui.backends.talkie.session import RECOVERY_DELAYS, SessionUpdate, TalkieSession
from talkie_tui.chat.turns import NoticePart
from talkie_tui.core.errors import ServerError, TooLargeError
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.events import StreamTruncated
from talkie_tui.protocol.talkie.run_request import RunRequest
from tests.protocol.conftest import Connect, Serve
from tests.stub_server import (
    ENDPOINTS,
    error_response,
    manifest_document,
    sse_frame,
    sse_response,
    talkie_app,
)

Handler = Callable[[Request], Awaitable[Response]]


def stream(*events: dict[str, Any]) -> Response:
    return sse_response("".join(sse_frame(event) for event in events))


STARTED = {"type": "RUN_STARTED", "threadId": "t_srv", "runId": "r_1"}
FINISHED = {"type": "RUN_FINISHED", "threadId": "t_srv", "runId": "r_1"}


def content(delta: str) -> dict[str, Any]:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m_a", "delta": delta}


class ChatStub:
    """A talkie/1 stub: the run endpoint answers from `runs` in turn, GET thread from `threads`
    in turn (the last entry repeats); it records the run bodies."""

    def __init__(self, runs: list[Response], threads: list[Response] | None = None) -> None:
        self.runs = runs
        self.threads = threads or [error_response(404, "not_found")]
        self.run_bodies: list[dict[str, Any]] = []

    @staticmethod
    def _next(queue: list[Response]) -> Response:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    async def run(self, request: Request) -> Response:
        self.run_bodies.append(await request.json())
        return self._next(self.runs)

    async def thread(self, request: Request) -> Response:
        return self._next(self.threads)

    def app(self, **options: Any) -> Any:
        return talkie_app(
            [
                Route(ENDPOINTS["run"], self.run, methods=["POST"]),
                Route("/api/talkie/threads/{tid}", self.thread),
            ],
            **options,
        )


def stored(message_id: str, *, answered: bool, text: str = "The whole answer.") -> Response:
    messages = [{"id": message_id, "role": "user", "content": "question"}]
    if answered:
        messages.append({"id": "m_a", "role": "assistant", "content": text})
    return JSONResponse({"thread": {"id": "t_srv"}, "messages": messages})


class Sleeps:
    """A sleep that only records: recovery polls without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


async def send_all(session: TalkieSession, request: RunRequest) -> list[SessionUpdate]:
    return [update async for update in session.send(request)]


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


async def session_for(
    serve: Serve, connect: Connect, stub: ChatStub, sleeps: Sleeps, **app: Any
) -> TalkieSession:
    client: TalkieClient = await connect(serve(stub.app(**app)).origin)
    return TalkieSession(client, sleep=sleeps)


# --- sending --------------------------------------------------------------------------------


async def test_an_answer_streams_into_the_conversation(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """Each event is applied and reported; the server's thread id is adopted (§5)."""
    stub = ChatStub([stream(STARTED, content("Ahoj"), FINISHED)])
    session = await session_for(serve, connect, stub, sleeps)

    updates = await send_all(session, session.prepare("Dobrý den"))

    assert [type(u.event).__name__ for u in updates] == [
        "RunStartedEvent",
        "TextMessageContentEvent",
        "RunFinishedEvent",
    ]
    assert session.thread_id == "t_srv"
    user, agent = session.conversation.turns
    assert (user.role, user.text, user.state) == ("user", "Dobrý den", "done")
    assert (agent.text, agent.state) == ("Ahoj", "done")
    assert session.prepare("next").thread_id == "t_srv"


async def test_a_failed_send_keeps_the_turn_and_a_resend_does_not_duplicate_it(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """Nothing typed is lost: the failed turn is marked `failed`; re-sending the same request
    uses the same message id (§5 idempotent retry) and the turn appears once."""
    stub = ChatStub(
        [
            error_response(400, "invalid_request", "Try later"),
            stream(STARTED, content("Ahoj"), FINISHED),
        ]
    )
    session = await session_for(serve, connect, stub, sleeps)
    request = session.prepare("Dobrý den")

    with pytest.raises(ServerError, match="Try later"):
        await send_all(session, request)
    (turn,) = session.conversation.turns
    assert (turn.id, turn.state, turn.text) == (request.message_id, "failed", "Dobrý den")

    await send_all(session, request)

    assert [t.role for t in session.conversation.turns] == ["user", "assistant"]
    assert session.conversation.turns[0] is turn and turn.state == "done"
    ids = [body["messages"][0]["id"] for body in stub.run_bodies]
    assert ids == [request.message_id, request.message_id]


async def test_a_message_over_the_limit_fails_without_reaching_the_server(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """limits.maxMessageChars: the turn is `failed`, the text kept, nothing sent."""
    stub = ChatStub([stream(STARTED, FINISHED)])
    session = await session_for(
        serve,
        connect,
        stub,
        sleeps,
        manifest=lambda origin: manifest_document(origin, limits={"maxMessageChars": 5}),
    )

    with pytest.raises(TooLargeError):
        await send_all(session, session.prepare("too long"))

    assert session.conversation.turns[0].state == "failed"
    assert stub.run_bodies == []


# --- recovery -------------------------------------------------------------------------------


async def test_a_lost_stream_is_recovered_from_the_thread(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """§5: a dropped stream is not a cancel; the session polls the thread until the answer is
    stored, then shows it."""
    stub = ChatStub([stream(STARTED, content("The who"))])
    session = await session_for(serve, connect, stub, sleeps)
    request = session.prepare("question")
    waiting = stored(request.message_id, answered=False)
    stub.threads = [waiting, waiting, stored(request.message_id, answered=True)]

    updates = await send_all(session, request)

    assert isinstance(updates[-2].event, StreamTruncated) and updates[-2].change is None
    assert updates[-1] == SessionUpdate(Recovered(complete=True), None)
    assert sleeps.delays == list(RECOVERY_DELAYS[:3])
    assert [(t.role, t.text, t.state) for t in session.conversation.turns] == [
        ("user", "question", "done"),
        ("assistant", "The whole answer.", "done"),
    ]


async def test_recovery_gives_up_and_shows_what_it_has(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """When the answer never appears, what arrived stays, with a truncation warning."""
    stub = ChatStub([stream(STARTED, content("partial"))])
    session = await session_for(serve, connect, stub, sleeps)
    request = session.prepare("question")
    stub.threads = [
        error_response(503, "upstream_unavailable", retryable=True),
        stored(request.message_id, answered=False),
    ]

    updates = await send_all(session, request)

    assert updates[-1].event == Recovered(complete=False)
    assert len(sleeps.delays) == len(RECOVERY_DELAYS)
    last = session.conversation.turns[-1]
    assert last.state == "truncated" and isinstance(last.parts[-1], NoticePart)
    assert session.conversation.turns[0].text == "question"
    assert last.text == "partial"
    assert updates[-1].event.pending  # type: ignore[union-attr]


async def test_when_the_thread_cannot_be_loaded_the_partial_answer_stays(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """If every poll fails, the streamed part of the answer is kept and marked truncated."""
    stub = ChatStub([stream(STARTED, content("partial"))])
    session = await session_for(serve, connect, stub, sleeps)

    updates = await send_all(session, session.prepare("question"))

    assert updates[-1].event == Recovered(complete=False)
    answer = session.conversation.turns[-1]
    assert (answer.text, answer.state) == ("partial", "truncated")


async def test_a_thread_that_is_gone_ends_the_wait_at_the_first_look(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """GET thread answers 404: no second look, the reason is in the outcome and the notice."""
    stub = ChatStub(
        [stream(STARTED, content("partial"))], [error_response(404, "not_found", "No thread")]
    )
    session = await session_for(serve, connect, stub, sleeps)

    updates = await send_all(session, session.prepare("question"))

    assert sleeps.delays == [0.0]
    outcome = updates[-1].event
    assert isinstance(outcome, Recovered) and not outcome.complete and not outcome.pending
    assert outcome.reason == "The thread cannot be loaded (HTTP 404): No thread"
    notice = session.conversation.turns[-1].parts[-1]
    assert isinstance(notice, NoticePart) and notice.text.endswith(outcome.reason)


async def test_an_abandoned_stream_is_not_waited_for(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """An event over the cap: the client closed the stream itself; nothing is polled."""
    huge = sse_frame(STARTED) + "data: " + "x" * (1100 << 10) + "\n\n"
    stub = ChatStub([sse_response(huge)], [stored("m_x", answered=True)])
    session = await session_for(serve, connect, stub, sleeps)

    updates = await send_all(session, session.prepare("question"))

    truncated = updates[-2].event
    assert isinstance(truncated, StreamTruncated) and truncated.abandoned
    assert updates[-1].event == Recovered(complete=False)
    assert sleeps.delays == []
    assert session.conversation.turns[-1].state == "truncated"


class Forever:
    """A sleep that never ends: the wait lasts until it is stopped."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.Event().wait()


async def test_stop_waiting_ends_the_wait_and_keeps_the_message(
    serve: Serve, connect: Connect
) -> None:
    """stop_waiting(): Recovered(complete=False, pending), the partial answer with a notice."""
    stub = ChatStub([stream(STARTED, content("partial"))])
    client = await connect(serve(stub.app()).origin)
    session = TalkieSession(client, sleep=Forever())
    assert not session.stop_waiting()  # nothing to stop yet

    sending = asyncio.ensure_future(send_all(session, session.prepare("question")))
    while not session.waiting:
        await asyncio.sleep(0.01)
    assert session.stop_waiting()
    updates = await asyncio.wait_for(sending, 5)

    outcome = updates[-1].event
    assert isinstance(outcome, Recovered) and not outcome.complete and outcome.pending
    assert outcome.reason == "You stopped waiting; the server may still finish the answer."
    user, answer = session.conversation.turns
    assert (user.text, answer.text, answer.state) == ("question", "partial", "truncated")
    notice = answer.parts[-1]
    assert isinstance(notice, NoticePart) and notice.retryable
    assert not session.waiting and not session.stop_waiting()


async def test_cancelling_the_send_while_it_waits_cancels_it(
    serve: Serve, connect: Connect
) -> None:
    """Cancelling the send (Ctrl+C in `talkie ask`) is not mistaken for stop_waiting()."""
    stub = ChatStub([stream(STARTED, content("partial"))])
    client = await connect(serve(stub.app()).origin)
    session = TalkieSession(client, sleep=Forever())

    sending = asyncio.ensure_future(send_all(session, session.prepare("question")))
    while not session.waiting:
        await asyncio.sleep(0.01)
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    assert not session.waiting


async def test_load_replaces_the_conversation_with_the_stored_thread(
    serve: Serve, connect: Connect, sleeps: Sleeps
) -> None:
    """§9: opening a thread shows its stored turns."""
    stub = ChatStub([stream(STARTED, FINISHED)], [stored("m_1", answered=True, text="Hi")])
    session = await session_for(serve, connect, stub, sleeps)

    conversation = await session.load("t_srv")

    assert session.conversation is conversation and session.thread_id == "t_srv"
    assert [t.text for t in conversation.turns] == ["question", "Hi"]
