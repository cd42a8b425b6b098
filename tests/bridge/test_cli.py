"""`talkie bridge cuckoo` on the command line: help, bad usage, and the real command in a
subprocess against the reference hub and Talkie server (Ctrl+C, a replaced binding, sign-in)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import pytest

from talkie_tui.cli import main
from tests.bridge.conftest import Agent, Person
from tests.helpers import TEST_TOKEN

SECRET = "bnd_sec_" + "a" * 52


def test_help_names_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["bridge", "cuckoo", "--help"])
    assert ended.value.code == 0
    text = capsys.readouterr().out
    for option in ("SERVER", "--hub", "--secret", "--allow", "--token", "--state", "--webhook"):
        assert option in text
    assert "private" in text


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["bridge"], "KIND"),
        (["bridge", "cuckoo", "crm.example.com"], "--hub"),
        (["bridge", "cuckoo", "crm.example.com", "--hub", "hub.example.com"], "--secret"),
        (
            ["bridge", "cuckoo", "crm.example.com", "--hub", "h", "--secret", "ses_tok_x"],
            "bnd_sec_",
        ),
        (
            ["bridge", "cuckoo", "x", "--hub", "h", "--secret", SECRET, "--allow", "priya"],
            "usr_",
        ),
        (["bridge", "minara", "x"], "invalid choice"),
        (
            ["bridge", "cuckoo", "x", "--hub", "h", "--secret", SECRET, "--webhook", "8787"],
            "HOST:PORT",
        ),
    ],
)
def test_bad_usage_exits_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CUCKOO_BINDING_SECRET", raising=False)
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 2
    assert words in capsys.readouterr().err


def test_plain_http_hub_off_this_computer_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["bridge", "cuckoo", "127.0.0.1:9", "--hub", "http://hub.example.com", "--secret", SECRET]
    )
    assert code == 2
    assert "plain http" in capsys.readouterr().err


async def _start(
    server_url: str, agent: Agent, tmp_path: Path, *extra: str, token: str = TEST_TOKEN
) -> asyncio.subprocess.Process:
    env = {**os.environ, "TALKIE_HOME": str(tmp_path / "home"), "TALKIE_TOKEN": token}
    env.pop("CUCKOO_BINDING_SECRET", None)
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "talkie_tui.cli",
        "bridge",
        "cuckoo",
        server_url,
        "--hub",
        agent.hub,
        "--secret",
        agent.secret,
        *extra,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def _line_with(stream: asyncio.StreamReader, words: str, timeout: float = 20) -> list[str]:
    lines: list[str] = []

    async def read() -> list[str]:
        while True:
            raw = await stream.readline()
            if not raw:
                raise AssertionError(f"no line with {words!r} in {lines}")
            lines.append(raw.decode())
            if words in lines[-1]:
                return lines

    return await asyncio.wait_for(read(), timeout)


@pytest.mark.slow
async def test_the_command_serves_until_ctrl_c(
    server_url: str, agent: Agent, owner: Person, tmp_path: Path
) -> None:
    process = await _start(server_url, agent, tmp_path, "--state", str(tmp_path / "b.sqlite3"))
    try:
        assert process.stdout is not None and process.stderr is not None
        said = await _line_with(process.stdout, "connected to the hub")
        text = "".join(said)
        assert "as @" in text and agent.id in text
        assert f"answering {agent.owner.id} (the agent's owner)" in text
        await owner.say(agent.dm, "talkie-test:echo from the command")
        await owner.wait_agent_messages(
            agent.dm,
            lambda found: any(m["body"].get("text") == "from the command" for m in found),
        )
        await _line_with(process.stdout, "answered")
        process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), 15) == 0
        assert (tmp_path / "b.sqlite3").exists()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.slow
async def test_the_command_ends_with_1_when_the_binding_is_replaced(
    server_url: str, agent: Agent, tmp_path: Path
) -> None:
    process = await _start(server_url, agent, tmp_path)
    try:
        assert process.stdout is not None and process.stderr is not None
        await _line_with(process.stdout, "connected to the hub")
        await agent.rebind()
        assert await asyncio.wait_for(process.wait(), 15) == 1
        err = (await process.stderr.read()).decode()
        assert "revoked or replaced (4002)" in err
        assert "trying again" not in err
        # Its state file went to the state folder, named by the agent.
        assert list((tmp_path / "home").rglob(f"cuckoo-{agent.id}.sqlite3"))
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.slow
async def test_an_unknown_secret_ends_with_the_hubs_words(
    server_url: str, agent: Agent, tmp_path: Path
) -> None:
    old = agent.secret
    await agent.rebind()
    agent.secret = old
    process = await _start(server_url, agent, tmp_path)
    assert await asyncio.wait_for(process.wait(), 20) == 1
    assert process.stderr is not None
    err = (await process.stderr.read()).decode()
    assert "refused the binding secret" in err and "HTTP 401" in err


@pytest.mark.slow
async def test_a_refused_talkie_token_exits_3(
    server_url: str, agent: Agent, tmp_path: Path
) -> None:
    process = await _start(server_url, agent, tmp_path, token="wrong-token")
    assert await asyncio.wait_for(process.wait(), 20) == 3
    assert process.stderr is not None
    assert "sign-in needed" in (await process.stderr.read()).decode()


@pytest.mark.slow
async def test_a_hub_that_does_not_answer_ends_with_1(
    server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from talkie_tui.commands.bridge import bridge_cuckoo

    code = await bridge_cuckoo(
        server_url, hub="http://127.0.0.1:9", secret=SECRET, token=TEST_TOKEN
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "could not ask the hub who the agent is" in err and "Trying again may help" in err


@pytest.mark.slow
async def test_the_command_serves_a_webhook_binding_until_ctrl_c(
    server_url: str, agent: Agent, owner: Person, tmp_path: Path
) -> None:
    host, port = await agent.bind_webhook()
    process = await _start(server_url, agent, tmp_path, "--webhook", f"{host}:{port}")
    try:
        assert process.stdout is not None
        said = await _line_with(process.stdout, "waiting for messages")
        assert f"listening for the hub's webhook posts on http://{host}:{port}" in said[-1]
        await owner.say(agent.dm, "talkie-test:echo from the webhook")
        await owner.wait_agent_messages(
            agent.dm, lambda found: any(m["body"]["text"] == "from the webhook" for m in found)
        )
        await _line_with(process.stdout, "answered")
        process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), 15) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.slow
async def test_a_webhook_binding_without_webhook_says_how_to_serve_it(
    server_url: str, agent: Agent, tmp_path: Path
) -> None:
    await agent.bind_webhook()
    process = await _start(server_url, agent, tmp_path)
    assert await asyncio.wait_for(process.wait(), 20) == 1
    assert process.stderr is not None
    err = (await process.stderr.read()).decode()
    assert "binding_not_socket" in err and "--webhook HOST:PORT" in err


@pytest.mark.slow
async def test_a_webhook_address_in_use_ends_with_1(
    server_url: str, agent: Agent, tmp_path: Path
) -> None:
    host, port = await agent.bind_webhook()
    with socket.create_server((host, port)):
        process = await _start(server_url, agent, tmp_path, "--webhook", f"{host}:{port}")
        assert await asyncio.wait_for(process.wait(), 20) == 1
    assert process.stderr is not None
    err = (await process.stderr.read()).decode()
    assert f"could not listen on {host}:{port}" in err
