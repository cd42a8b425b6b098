"""The Minara backend against the reference gateway (devserver/minara) over real HTTP and
WebSocket on 127.0.0.1: the whole turn loop for each test-mode message of the contract,
resume after dropped sockets, and live == history for real turns."""

from __future__ import annotations

import asyncio
import hashlib
import io
import random
import wave
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from talkie_tui.backends import NotAServer, connect
from talkie_tui.backends.minara.backend import MinaraBackend
from talkie_tui.backends.minara.session import MinaraOutgoing, MinaraSession, MinaraUpdate
from talkie_tui.chat.turns import (
    AttachmentPart,
    InterjectionPart,
    NoticePart,
    QuestionPart,
    TextPart,
    TodoPart,
    ToolPart,
    UiBlockPart,
)
from talkie_tui.core.errors import ServerError, TransportError, UnauthorizedError
from talkie_tui.core.tokens import StaticToken
from tests.backends.minara.turn_shapes import shapes
from tests.helpers import AUTH, TEST_TOKEN
from tests.stub_server import StubServer

pytestmark = pytest.mark.slow


@pytest.fixture
async def backend(gateway_url: str) -> AsyncIterator[MinaraBackend]:
    connected = await connect(gateway_url, tokens=StaticToken(TEST_TOKEN))
    assert isinstance(connected, MinaraBackend)
    yield connected
    await connected.aclose()


async def turn(
    session: MinaraSession,
    text: str,
    *,
    during: Callable[[MinaraUpdate], Any] | None = None,
    **options: Any,
) -> tuple[MinaraOutgoing, list[MinaraUpdate]]:
    """Send `text` and read the whole answer; `during` sees each update as it comes."""
    outgoing = session.prepare(text, **options)
    updates: list[MinaraUpdate] = []

    async def read() -> None:
        async for update in session.send(outgoing):
            updates.append(update)
            if during is not None:
                result = during(update)
                if asyncio.iscoroutine(result):
                    await result

    await asyncio.wait_for(read(), 30)
    return outgoing, updates


async def history(backend: MinaraBackend, session: MinaraSession) -> MinaraSession:
    """The session loaded anew from its rows."""
    assert session.thread_id is not None
    loaded = backend.new_session()
    await loaded.load(session.thread_id)
    return loaded


def answer_of(session: MinaraSession) -> Any:
    last = session.conversation.turns[-1]
    assert last.role == "assistant"
    return last


# --- connecting -----------------------------------------------------------------------------


async def test_a_gateway_is_detected_and_named(gateway_url: str) -> None:
    backend = await connect(gateway_url, tokens=StaticToken(TEST_TOKEN))
    try:
        info = backend.info
        port = httpx.URL(gateway_url).port
        assert (info.protocol, info.sign_in) == ("minara", "token")
        assert info.name == f"Minara gateway · 127.0.0.1:{port}"
        caps = info.capabilities
        assert caps.questions and caps.attachments and caps.search and caps.models
        assert caps.interjections and caps.stop and caps.dictation and not caps.voice
    finally:
        await backend.aclose()


async def test_a_gateway_that_wants_a_token_says_so(gateway_url: str) -> None:
    with pytest.raises(UnauthorizedError):
        await connect(gateway_url)
    with pytest.raises(UnauthorizedError):
        await connect(gateway_url, protocol="minara", tokens=StaticToken("wrong"))


async def test_a_gateway_without_a_token_signs_in_with_none(
    minara_gateway: Callable[..., str],
) -> None:
    url = minara_gateway(test_mode=True, auth_token=None)
    backend = await connect(url)
    try:
        assert backend.info.sign_in == "none"
    finally:
        await backend.aclose()


async def test_neither_talkie_nor_minara_is_said_clearly() -> None:
    async def nothing_here(request: Request) -> Response:
        return PlainTextResponse("Welcome to my blog", status_code=404)

    stub = StubServer(Starlette(routes=[Route("/{path:path}", nothing_here)])).start()
    try:
        with pytest.raises(NotAServer) as caught:
            await connect(stub.origin)
    finally:
        stub.stop()
    assert "not a Talkie, Minara or Cuckoo server" in caught.value.message


async def test_an_address_where_nothing_answers_says_so_and_not_that_it_is_neither() -> None:
    with pytest.raises(TransportError) as caught:
        await connect("http://127.0.0.1:9")  # the discard port: nothing listens
    assert not isinstance(caught.value, NotAServer)
    assert "Could not connect to http://127.0.0.1:9" in caught.value.message
    assert caught.value.retryable


# --- the turn loop for each test message -----------------------------------------------------


async def test_echo_and_count(backend: MinaraBackend) -> None:
    session = backend.new_session()
    outgoing, updates = await turn(session, "minara-test:echo Hello world")
    assert outgoing.finished and outgoing.failure is None and outgoing.delivered
    assert answer_of(session).text == "Hello world"
    assert [u.delta for u in updates if u.delta] and all(u.wire for u in updates)
    assert outgoing.thread_id == session.thread_id and outgoing.run_id == session.thread_id
    await turn(session, "minara-test:count 5")
    assert answer_of(session).text == "1 2 3 4 5 "
    loaded = await history(backend, session)
    assert shapes(loaded.conversation) == shapes(session.conversation)


async def test_tools(backend: MinaraBackend) -> None:
    session = backend.new_session()
    await turn(session, "minara-test:tools")
    parts = answer_of(session).parts
    tools = [p for p in parts if isinstance(p, ToolPart)]
    assert [(t.tool_call_id, t.label, t.state) for t in tools] == [
        ("t1", "Looking up prices", "ok"),
        ("t2", tools[1].label, "failed"),
    ]
    assert tools[1].error == "Quote expired"
    assert answer_of(session).text == "Tools done."
    assert shapes((await history(backend, session)).conversation) == shapes(session.conversation)


async def test_blocks(backend: MinaraBackend) -> None:
    session = backend.new_session()
    await turn(session, "minara-test:blocks")
    blocks = [p for p in answer_of(session).parts if isinstance(p, UiBlockPart)]
    assert [b.kind for b in blocks] == ["markdown", "table", "kv", "link", "chart", "map"]
    table = blocks[1].data
    assert len(table["columns"]) == 3 and len(table["rows"]) == 4
    assert blocks[3].data["url"] == "https://example.com/docs"
    assert "fallback_text" in blocks[5].data
    assert shapes((await history(backend, session)).conversation) == shapes(session.conversation)


async def test_todos(backend: MinaraBackend) -> None:
    session = backend.new_session()
    _, updates = await turn(session, "minara-test:todos")
    todos = [p for p in answer_of(session).parts if isinstance(p, TodoPart)]
    assert len(todos) == 1 and len(todos[0].items) == 3
    assert all(done for _text, done in todos[0].items)
    assert sum(1 for u in updates if u.change is todos[0]) == 3  # replaced in place
    assert shapes((await history(backend, session)).conversation) == shapes(session.conversation)


@pytest.mark.parametrize(
    ("kind", "answers", "expected"),
    [
        ("select", [["Savings"]], "Answer: Savings"),
        ("multi", [["Salary", "Travel"]], "Answer: Salary, Travel"),
        ("confirm", [["Confirm"]], "Answer: Confirm"),
        ("input", [["a free text"]], "Answer: a free text"),
    ],
)
async def test_questions_are_answered(
    backend: MinaraBackend, kind: str, answers: list[list[str]], expected: str
) -> None:
    session = backend.new_session()
    outcomes: list[str] = []

    async def answer(update: MinaraUpdate) -> None:
        if isinstance(update.change, QuestionPart) and update.change.outcome is None:
            outcomes.append(await backend.answer(update.change, answers))

    await turn(session, f"minara-test:question {kind}", during=answer)
    question = next(p for p in answer_of(session).parts if isinstance(p, QuestionPart))
    assert outcomes == ["answered"] and question.outcome == "answered"
    assert expected in answer_of(session).text
    assert await backend.answer(question, answers) == "not_pending"  # answered already
    assert shapes((await history(backend, session)).conversation) == shapes(session.conversation)


@pytest.mark.parametrize("value", ["hunter2-\u00e9", None])
async def test_a_secret_is_written_never_shown(
    backend: MinaraBackend, gateway_url: str, value: str | None
) -> None:
    session = backend.new_session()
    names: list[str] = []

    async def provide(update: MinaraUpdate) -> None:
        change = update.change
        if isinstance(change, QuestionPart) and change.outcome is None:
            assert change.kind == "secret" and change.write_endpoint
            names.append(change.write_endpoint.rsplit("/", 1)[-1])
            assert await backend.provide_secret(change, value) == "answered"

    _, updates = await turn(session, "minara-test:question secret", during=provide)
    text = answer_of(session).text
    assert ("Answer: provided" if value else "Answer: declined") in text
    wires = "".join(u.wire or "" for u in updates)
    if value is not None:
        assert value not in wires and value not in text
        async with httpx.AsyncClient(headers=AUTH) as http:
            kept = (await http.get(f"{gateway_url}/v1/_test/credentials/{names[0]}")).json()
        assert kept == {"set": True, "sha256": hashlib.sha256(value.encode()).hexdigest()}


async def test_an_unanswered_question_times_out(backend: MinaraBackend) -> None:
    session = backend.new_session()
    await turn(session, "minara-test:question select 1")
    question = next(p for p in answer_of(session).parts if isinstance(p, QuestionPart))
    assert question.outcome == "timeout"
    assert "No answer: timed out." in answer_of(session).text
    assert await backend.answer(question, [["Savings"]]) == "not_pending"


async def test_interjections_steer_and_late_ones_come_back(backend: MinaraBackend) -> None:
    session = backend.new_session()
    sent: list[bool] = []

    async def steer(update: MinaraUpdate) -> None:
        deltas = [u for u in updates_seen if u.delta]
        updates_seen.append(update)
        if update.delta and len(deltas) == 2:
            sent.append(await backend.interject(session, "and the fees?"))
        if update.delta and len(deltas) == 18:
            sent.append(await backend.interject(session, "too late?"))

    updates_seen: list[MinaraUpdate] = []
    await turn(session, "minara-test:slow", during=steer)
    answer = answer_of(session)
    assert sent == [True, True]
    assert [p.text for p in answer.parts if isinstance(p, InterjectionPart)] == ["and the fees?"]
    assert answer.pending_interjections == ["too late?"]
    assert await backend.interject(session, "nothing runs") is False


async def test_an_error_ends_the_turn_with_the_gateways_words(backend: MinaraBackend) -> None:
    session = backend.new_session()
    outgoing, _ = await turn(session, "minara-test:error")
    failure = outgoing.failure
    assert failure is not None and not outgoing.finished and outgoing.settled
    assert (failure.code, failure.retryable) == ("agent_failed", True)
    assert failure.message == "The agent failed on purpose."
    answer = answer_of(session)
    assert answer.state == "error" and answer.text == "Partial."
    assert shapes((await history(backend, session)).conversation) == shapes(session.conversation)


async def test_stop_interrupts_an_endless_turn(backend: MinaraBackend) -> None:
    session = backend.new_session()
    stopped: list[bool] = []

    async def stop(update: MinaraUpdate) -> None:
        if update.delta and not stopped:
            stopped.append(True)
            assert outgoing_box[0].run_id is not None
            await backend.stop(outgoing_box[0].run_id)

    outgoing_box: list[MinaraOutgoing] = []
    outgoing = session.prepare("minara-test:endless")
    outgoing_box.append(outgoing)
    async for update in session.send(outgoing):
        await stop(update)
    assert outgoing.finished and answer_of(session).state == "cancelled"
    assert shapes((await history(backend, session)).conversation) == shapes(session.conversation)


async def test_a_newer_protocol_version_ends_the_send_clearly(backend: MinaraBackend) -> None:
    session = backend.new_session()
    outgoing, _ = await turn(session, "minara-test:version2")
    assert outgoing.failure is not None and "version 2" in outgoing.failure.message
    assert outgoing.failure.code == "unsupported_protocol_version"
    assert session.conversation.turns[0].text == "minara-test:version2"  # what was typed stays


async def test_unknown_events_and_fields_are_skipped(backend: MinaraBackend) -> None:
    session = backend.new_session()
    outgoing, _ = await turn(session, "minara-test:unknown")
    assert outgoing.finished and answer_of(session).text == "abc"


async def test_a_frame_over_one_mib_is_refused_and_the_turn_goes_on(backend: MinaraBackend) -> None:
    session = backend.new_session()
    outgoing, _ = await turn(session, "minara-test:huge")
    answer = answer_of(session)
    notices = [p for p in answer.parts if isinstance(p, NoticePart)]
    assert outgoing.finished and answer.text == "after"
    assert [n.kind for n in notices] == ["malformed"] and "1,048,576" in notices[0].text


async def test_attachments_go_with_the_message(backend: MinaraBackend, tmp_path: Path) -> None:
    path = tmp_path / "chart.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 48_000)
    progress: list[int] = []
    attachment = await backend.upload(path, progress=lambda sent, total: progress.append(sent))
    assert attachment.kind == "image" and attachment.size == path.stat().st_size
    assert progress[-1] == attachment.size
    session = backend.new_session()
    await turn(session, "what does this chart show?", attachments=[attachment])
    assert "I received chart.png, 48 kB" in answer_of(session).text
    loaded = await history(backend, session)
    files = [p for p in loaded.conversation.turns[0].parts if isinstance(p, AttachmentPart)]
    assert [(f.filename, f.kind, f.key) for f in files] == [("chart.png", "image", attachment.key)]
    assert [type(p) for p in session.conversation.turns[0].parts] == [
        type(p) for p in loaded.conversation.turns[0].parts
    ]
    async with backend.download(files[0].url or files[0].key) as response:
        assert (await response.aread()) == path.read_bytes()


async def test_models_and_a_refused_model_keeps_the_message(backend: MinaraBackend) -> None:
    offered = await backend.models()
    assert [m.id for m in offered.models] == ["minara-fast", "minara-pro"]
    assert offered.default == "minara-fast" and offered.models[1].reasoning
    session = backend.new_session()
    outgoing, _ = await turn(
        session, "minara-test:echo pro", model="minara-pro", reasoning_effort="low"
    )
    assert outgoing.finished
    with pytest.raises(ServerError) as caught:
        await turn(session, "minara-test:echo x", model="minara-fast", reasoning_effort="high")
    assert caught.value.code == "invalid_model" and caught.value.status == 400
    kept = session.conversation.turns[-1]
    assert kept.text == "minara-test:echo x" and kept.state == "failed"


async def test_a_retry_with_the_same_message_id_starts_no_second_turn(
    backend: MinaraBackend,
) -> None:
    session = backend.new_session()
    outgoing, _ = await turn(session, "minara-test:echo once")
    again = session.again(outgoing.text, outgoing.message_id)
    assert again.message_id == outgoing.message_id
    loaded = await history(backend, session)
    assert [t.role for t in loaded.conversation.turns] == ["user", "assistant"]


async def test_threads_search_and_delete(backend: MinaraBackend) -> None:
    session = backend.new_session()
    await turn(session, "minara-test:echo zebra crossing")
    threads = await backend.threads()
    assert session.thread_id in [t.id for t in threads]
    hits = await backend.search("zebra")
    assert hits and hits[0].thread_id == session.thread_id and "«" in hits[0].snippet
    await backend.delete_thread(session.thread_id or "")
    assert session.thread_id not in [t.id for t in await backend.threads()]


async def test_dictation_of_silence_is_empty_text_with_its_audio_key(
    backend: MinaraBackend,
) -> None:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as recording:
        recording.setnchannels(1)
        recording.setsampwidth(2)
        recording.setframerate(16000)
        recording.writeframes(b"\x00\x00" * 16000)
    heard = await backend.transcribe(buffer.getvalue())
    assert heard.text == "" and heard.audio_key


# --- resume -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_dropped_sockets_resume_with_every_seq_applied_once(
    backend: MinaraBackend, gateway_url: str, seed: int
) -> None:
    chooser = random.Random(seed)
    drop_at = sorted(chooser.sample(range(5, 195), 4))
    session = backend.new_session()
    drops = 0

    async with httpx.AsyncClient(headers=AUTH) as http:

        async def maybe_drop(update: MinaraUpdate) -> None:
            nonlocal drops
            if update.delta and drops < len(drop_at) and counted() >= drop_at[drops]:
                drops += 1
                await http.post(f"{gateway_url}/v1/_test/drop_sockets")

        deltas: list[str] = []

        def counted() -> int:
            return len(deltas)

        async def during(update: MinaraUpdate) -> None:
            if update.delta:
                deltas.append(update.delta)
            await maybe_drop(update)

        outgoing, updates = await turn(session, "minara-test:count 200 5", during=during)

    assert outgoing.finished and drops == 4
    assert answer_of(session).text == "".join(f"{n} " for n in range(1, 201))
    seqs = [u.seq for u in updates if u.seq is not None]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # each once, none skipped
    assert sum(1 for u in updates if u.lost) >= 1
    assert sum(1 for u in updates if u.recovered is not None) >= 1
    reference = backend.new_session()
    await turn(reference, "minara-test:count 200")
    assert [(p.text, p.done) for p in answer_of(session).parts if isinstance(p, TextPart)] == [
        (p.text, p.done) for p in answer_of(reference).parts if isinstance(p, TextPart)
    ]
    assert shapes((await history(backend, session)).conversation) == shapes(session.conversation)


async def test_a_second_turn_follows_on_from_the_first(backend: MinaraBackend) -> None:
    session = backend.new_session()
    _, first = await turn(session, "minara-test:count 3")
    _, second = await turn(session, "minara-test:count 2")
    last_first = max(u.seq for u in first if u.seq is not None)
    assert min(u.seq for u in second if u.seq is not None) == last_first + 1
    assert [t.text for t in session.conversation.turns[1::2]] == ["1 2 3 ", "1 2 "]


async def test_a_session_loaded_mid_turn_reattaches(backend: MinaraBackend) -> None:
    writer = backend.new_session()
    started = asyncio.Event()

    async def note(update: MinaraUpdate) -> None:
        if update.delta:
            started.set()

    sending = asyncio.create_task(turn(writer, "minara-test:count 40 25", during=note))
    await asyncio.wait_for(started.wait(), 10)
    reader = backend.new_session()
    await reader.load(writer.thread_id or "")
    assert reader.streaming
    updates = [u async for u in reader.reattach()]
    await sending
    assert answer_of(reader).text == "".join(f"{n} " for n in range(1, 41))
    assert updates and answer_of(reader).state == "done"
    assert shapes(reader.conversation) == shapes(writer.conversation)
