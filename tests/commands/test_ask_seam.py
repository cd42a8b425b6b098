"""`talkie ask` and `talkie threads` speak to a Backend only: a backend written here, speaking no
protocol, is printed as the contract says (docs/ARCHITECTURE.md), and `--protocol` reaches
`backends.connect`.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from talkie_tui import backends
from talkie_tui.backends.base import Broken, Failure, Recovered
from talkie_tui.chat.conversation import Change, Conversation
from talkie_tui.chat.turns import CardPart
from talkie_tui.cli import build_parser, main
from talkie_tui.commands.ask import ask
from talkie_tui.commands.threads import list_threads
from talkie_tui.protocol.talkie.cards import Card
from talkie_tui.protocol.talkie.models import Action, Thread

CARD = Card.model_validate({"title": "Alfa s.r.o.", "fallbackText": "Alfa s.r.o. – Praha"})
ACTION = Action(
    id="a_1", summary="Call Petr Novák", risk_level="low", status="pending", params_hash="sha256:1"
)


@dataclass
class Step:
    """One step of an answer: the members of `Update` that `talkie ask` reads (`wire` is this
    backend's own JSON)."""

    change: Change
    wire: str | None = None
    delta: str | None = None
    broken: Broken | None = None
    recovered: Recovered | None = None


@dataclass
class Message:
    text: str
    message_id: str
    thread_id: str | None = "t_seam"
    run_id: str | None = "r_seam"
    finished: bool = False
    failure: Failure | None = None

    @property
    def settled(self) -> bool:
        return self.finished or self.failure is not None


class ScriptedSession:
    """A thread whose answer is what `script` makes of the conversation and the message: only
    the members of `Session` that `talkie ask` uses."""

    def __init__(self, script: str) -> None:
        self.conversation = Conversation()
        self.script = script

    def prepare(self, text: str) -> Message:
        return Message(text, "m_1")

    async def send(self, message: Message) -> AsyncIterator[Step]:
        talk = self.conversation
        talk.thread_id = "t_seam"
        talk.add_user_message(message.message_id, message.text)
        yield Step(talk.begin_answer("r_seam"), wire='{"kind":"begin"}')
        for words in ("Alfa is ", "in Praha."):
            yield Step(
                talk.add_text("m_a", words), wire=f'{{"kind":"text","t":"{words}"}}', delta=words
            )
        if self.script == "broken":
            yield Step(None, wire='{"kind":"broken"}', broken=Broken("Cut off.", abandoned=True))
            yield Step(talk.cut_off("Cut off."), recovered=Recovered(complete=False))
            return
        yield Step(talk.add_part(CardPart(CARD)), wire='{"kind":"card"}')
        yield Step(talk.propose(ACTION), wire='{"kind":"action"}')
        if self.script == "failure":
            message.failure = Failure("The agent gave up.", code="agent_failed", retryable=True)
            yield Step(talk.fail("The agent gave up."), wire='{"kind":"failed"}')
            return
        message.finished = True
        yield Step(talk.end_answer("done"), wire='{"kind":"end"}')


@dataclass
class ScriptedBackend:
    script: str = "answer"
    closed: bool = False
    connected_with: dict[str, Any] = field(default_factory=dict)

    def new_session(self, thread_id: str | None = None) -> ScriptedSession:
        return ScriptedSession(self.script)

    async def threads(self) -> list[Thread]:
        when = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
        return [Thread(id="t_seam", title="Alfa", updated_at=when)]

    async def stop(self, run_id: str) -> None:
        return None

    async def aclose(self) -> None:
        self.closed = True


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> ScriptedBackend:
    """`backends.connect` hands out the scripted backend, recording how it was asked."""
    scripted = ScriptedBackend()

    async def connect(address: str, **options: Any) -> ScriptedBackend:
        scripted.connected_with = {"address": address, **options}
        return scripted

    monkeypatch.setattr(backends, "connect", connect)
    return scripted


async def run_ask(message: str = "Where is Alfa?", **options: Any) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await ask("seam.invalid", message, token="dev", out=out, err=err, **options)
    return int(code), out.getvalue(), err.getvalue()


async def test_ask_prints_text_cards_and_actions_of_any_backend(backend: ScriptedBackend) -> None:
    code, out, err = await run_ask()
    assert (code, err) == (0, "")
    assert out == (
        "Alfa is in Praha.\nAlfa s.r.o. – Praha\n[action a_1] Call Petr Novák (risk low, pending)\n"
    )
    assert backend.closed


async def test_ask_json_prints_each_steps_wire_line_as_it_is(backend: ScriptedBackend) -> None:
    code, out, _err = await run_ask(as_json=True)
    assert code == 0
    assert out.splitlines() == [
        '{"kind":"begin"}',
        '{"kind":"text","t":"Alfa is "}',
        '{"kind":"text","t":"in Praha."}',
        '{"kind":"card"}',
        '{"kind":"action"}',
        '{"kind":"end"}',
    ]


async def test_a_failure_is_exit_1_with_the_servers_words(backend: ScriptedBackend) -> None:
    backend.script = "failure"
    code, out, err = await run_ask()
    assert code == 1
    assert out.startswith("Alfa is in Praha.\n")
    assert err == "talkie: The agent gave up. (agent_failed)\n  Trying again may help.\n"


async def test_a_broken_stream_without_the_answer_is_exit_1(backend: ScriptedBackend) -> None:
    backend.script = "broken"
    code, out, err = await run_ask(as_json=True)
    assert code == 1
    assert out.splitlines()[-1] == '{"kind":"broken"}'  # the recovery has no wire line
    assert err == "talkie: Cut off.\n"


async def test_threads_lists_any_backends_threads(backend: ScriptedBackend) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert await list_threads("seam.invalid", token="dev", out=out, err=err) == 0
    assert out.getvalue() == "t_seam\t2026-05-04 09:30\tchat\tAlfa\n"
    assert backend.closed


@pytest.mark.parametrize("command", ["connect", "ask", "threads", "login"])
def test_protocol_is_the_servers_own_unless_forced(command: str) -> None:
    args = {"connect": [], "ask": ["seam.invalid", "hi"], "threads": ["seam.invalid"]}
    rest = args.get(command, ["seam.invalid"])
    assert build_parser().parse_args([command, *rest]).protocol is None
    assert build_parser().parse_args([command, *rest, "--protocol", "talkie"]).protocol == "talkie"


@pytest.mark.parametrize("command", ["connect", "ask", "threads", "login"])
def test_minara_is_spoken(command: str) -> None:
    args = {"connect": [], "ask": ["seam.invalid", "hi"], "threads": ["seam.invalid"]}
    rest = args.get(command, ["seam.invalid"])
    assert build_parser().parse_args([command, *rest, "--protocol", "minara"]).protocol == "minara"


@pytest.mark.parametrize("command", ["connect", "ask", "threads", "login"])
def test_cuckoo_is_spoken(command: str) -> None:
    args = {"connect": [], "ask": ["seam.invalid", "hi"], "threads": ["seam.invalid"]}
    rest = args.get(command, ["seam.invalid"])
    assert build_parser().parse_args([command, *rest, "--protocol", "cuckoo"]).protocol == "cuckoo"


@pytest.mark.parametrize("command", ["connect", "ask", "threads", "login"])
def test_a_protocol_without_a_backend_is_bad_usage(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "seam.invalid", "--protocol", "matrix"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'matrix'" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["ask", "seam.invalid", "hi"], ["threads", "seam.invalid"]])
def test_ask_and_threads_pass_protocol_to_backends_connect(
    command: list[str], backend: ScriptedBackend, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--protocol", "talkie", "--token", "dev"]) == 0
    assert backend.connected_with["address"] == "seam.invalid"
    assert backend.connected_with["protocol"] == "talkie"
    assert main([*command, "--token", "dev"]) == 0
    assert backend.connected_with["protocol"] is None
