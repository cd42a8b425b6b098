"""`talkie ask`, `threads`, `login` and `logout` against the reference Cuckoo hub, with the
independent test agent answering."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest

from talkie_tui.auth.file_store import FileStore
from talkie_tui.backends.cuckoo import sign_in
from talkie_tui.commands.ask import ask
from talkie_tui.commands.login import list_servers, login, logout
from talkie_tui.commands.threads import list_threads
from talkie_tui.config import KnownServers
from tests.backends.cuckoo.conftest import Hub, hub, on_message
from tests.cuckoo_peer.agent import AgentBackend, echo

pytestmark = pytest.mark.slow

__all__ = ["hub"]  # the reference hub fixture, shared with the hub backend tests


class Terminal(io.StringIO):
    """A terminal's stdin: the e-mail address, then the code the hub "mailed" by then."""

    def __init__(self, hub: Hub, email: str, *, code: str | None = None) -> None:
        super().__init__()
        self.lines = [email, code]
        self.hub, self.email = hub, email

    def isatty(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:
        if not self.lines:
            return ""
        line = self.lines.pop(0)
        if line is None:
            line = self.hub.codes[self.email.lower()]
        return line + "\n"


async def test_ask_prints_the_reply_and_json_the_pushes(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, echo)
    out, err = io.StringIO(), io.StringIO()
    code = await ask(hub.url, "hi hub", token=person.token, out=out, err=err)
    assert code == 0, err.getvalue()
    assert out.getvalue() == "echo: hi hub\n"
    out = io.StringIO()
    code = await ask(
        hub.url,
        "again",
        token=person.token,
        thread=agent.conversation_id,
        as_json=True,
        protocol="cuckoo",
        out=out,
        err=err,
    )
    assert code == 0, err.getvalue()
    frames = [json.loads(line) for line in out.getvalue().splitlines()]
    assert all(set(frame) == {"type", "data"} for frame in frames)
    created = [
        f["data"]["message"]["body"]["text"] for f in frames if f["type"] == "message.created"
    ]
    assert "echo: again" in created


async def buttons(peer: AgentBackend, event: dict[str, Any], text: str) -> None:
    conversation_id = event["data"]["conversation"]["id"]
    rows = [[{"id": "y", "label": "Yes"}, {"url": "https://example.com/docs", "label": "Docs"}]]
    await peer.send(conversation_id, "Go ahead?", buttons=rows, quick_replies=[{"label": "Later"}])


async def test_ask_prints_buttons_and_quick_replies_as_lines(hub: Hub) -> None:
    person = await hub.person()
    await hub.agent(person, on_message(buttons))
    out, err = io.StringIO(), io.StringIO()
    assert await ask(hub.url, "shall we", token=person.token, out=out, err=err) == 0
    assert out.getvalue() == (
        "Go ahead?\n[buttons] Yes · Docs <https://example.com/docs>\n[replies] Later\n"
    )


async def test_ask_without_a_sign_in_says_how_to_sign_in(hub: Hub) -> None:
    err = io.StringIO()
    assert await ask(hub.url, "hello", out=io.StringIO(), err=err) == 3
    assert "talkie login" in err.getvalue() and "e-mail" in err.getvalue()


async def test_ask_an_agent_that_never_answers_fails_with_the_reason(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from talkie_tui.backends.cuckoo import session

    monkeypatch.setattr(session, "QUIET_SECONDS", 1.0)
    monkeypatch.setattr(session, "POLL_SECONDS", 0.3)
    person = await hub.person()
    agent = await hub.agent(person, connect=False)
    out, err = io.StringIO(), io.StringIO()
    assert await ask(hub.url, "hello?", token=person.token, out=out, err=err) == 1
    assert out.getvalue() == ""
    said = err.getvalue()
    assert "has not answered yet" in said
    assert f"--thread {agent.conversation_id}" in said


async def test_threads_lists_the_conversations(hub: Hub) -> None:
    person = await hub.person()
    agent = await hub.agent(person, name="Lister Bot", connect=False)
    out, err = io.StringIO(), io.StringIO()
    assert await list_threads(hub.url, token=person.token, out=out, err=err) == 0
    line = out.getvalue().strip()
    assert line.startswith(agent.conversation_id + "\t") and line.endswith("\tchat\tLister Bot")


async def test_login_asks_the_e_mail_and_the_code_then_logout_ends_it(hub: Hub) -> None:
    err = io.StringIO()
    stdin = Terminal(hub, "Grace@Example.com")
    code = await login(hub.url, store_kind="file", stdin=stdin, err=err)
    assert code == 0, err.getvalue()
    assert "Signed in to Cuckoo hub" in err.getvalue() and "as grace" in err.getvalue()
    token = sign_in.kept(hub.url, FileStore())
    assert token is not None and token.startswith("ses_tok_")
    entry = KnownServers.load().find(hub.url)
    assert entry is not None and entry.protocol == "cuckoo" and entry.signed_in
    servers = io.StringIO()
    list_servers(servers)
    assert "signed in (file)" in servers.getvalue()
    # The kept sign-in is used by ask and threads.
    out = io.StringIO()
    assert await list_threads(hub.url, out=out, err=err) == 0
    assert out.getvalue() == "No threads yet.\n"
    err = io.StringIO()
    assert await logout(hub.url, err=err) == 0, err.getvalue()
    assert "The hub ended the session" in err.getvalue()
    assert sign_in.kept(hub.url, FileStore()) is None
    assert await list_threads(hub.url, token=token, out=io.StringIO(), err=err) == 3


async def test_login_takes_a_second_try_at_the_code(hub: Hub) -> None:
    err = io.StringIO()
    stdin = Terminal(hub, "lin@example.com")
    stdin.lines = ["lin@example.com", "999999x", None]
    code = await login(hub.url, protocol="cuckoo", store_kind="file", stdin=stdin, err=err)
    assert code == 0, err.getvalue()
    assert "Type the code again" in err.getvalue()


async def test_login_without_a_terminal_says_so(hub: Hub) -> None:
    err = io.StringIO()
    code = await login(hub.url, store_kind="file", stdin=io.StringIO("a@b.co\n"), err=err)
    assert code == 3
    assert "typed at a terminal" in err.getvalue()
    assert not hub.codes  # nothing was asked of the hub


async def test_the_command_line_speaks_cuckoo(hub: Hub, capsys: pytest.CaptureFixture[str]) -> None:
    from talkie_tui.cli import main

    person = await hub.person()
    await hub.agent(person, name="Cli Bot", connect=False)
    args = ["threads", hub.url, "--protocol", "cuckoo", "--token", person.token]
    assert await asyncio.to_thread(main, args) == 0
    assert capsys.readouterr().out.strip().endswith("Cli Bot")


async def test_ask_prints_every_message_of_the_answer_in_order_once(hub: Hub) -> None:
    """A card, the streamed text and a message with buttons (the bridge's way), while the agent
    thinks: all of it is the answer, and the next question's output has only its own."""
    from tests.backends.cuckoo.test_answers import three_messages

    person = await hub.person()
    agent = await hub.agent(person, on_message(three_messages))
    out, err = io.StringIO(), io.StringIO()
    code = await ask(hub.url, "Alfa", token=person.token, out=out, err=err)
    assert code == 0, err.getvalue()
    assert out.getvalue() == (
        "Card: Alfa\nTwo open items for Alfa.\nSend the offer?\n[buttons] Confirm · Cancel\n"
    )
    out = io.StringIO()
    code = await ask(
        hub.url, "Beta", token=person.token, thread=agent.conversation_id, out=out, err=err
    )
    assert code == 0, err.getvalue()
    assert out.getvalue() == (
        "Card: Beta\nTwo open items for Beta.\nSend the offer?\n[buttons] Confirm · Cancel\n"
    )
