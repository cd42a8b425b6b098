"""`talkie ask` and `talkie threads` against the reference Minara gateway (real HTTP and
WebSocket on 127.0.0.1): the parts printed as text, the exit codes, `--json`, the agent's
questions on stderr, a refused token's hint, and a closed pipe."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shlex
import subprocess
import sys
import time

import httpx
import pytest

from talkie_tui.chat.cells import cell_len
from talkie_tui.cli import main
from talkie_tui.commands.ask import PIPE_WIDTH, ask
from talkie_tui.commands.common import report_error
from talkie_tui.core.errors import UnauthorizedError
from tests.helpers import AUTH, TEST_TOKEN
from tests.test_closed_pipe import assert_quiet, talkie_into_closed_pipe

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _no_token_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MINARA_TOKEN", raising=False)
    monkeypatch.delenv("TALKIE_TOKEN", raising=False)


def ask_cli(
    capsys: pytest.CaptureFixture[str], url: str, message: str, *args: str
) -> tuple[int, str, str]:
    """`talkie ask URL MESSAGE --token TEST_TOKEN ARGS` in this process: (code, out, err)."""
    code = main(["ask", url, message, "--token", TEST_TOKEN, *args])
    out, err = capsys.readouterr()
    return code, out, err


def stored_sessions(url: str) -> list[dict[str, object]]:
    response = httpx.get(f"{url}/v1/sessions", headers=AUTH)
    response.raise_for_status()
    return list(response.json()["sessions"])


class Terminal(io.StringIO):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True


# --- the parts as text ----------------------------------------------------------------------


def test_blocks_print_as_text_tables_and_sparklines(
    gateway_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ask_cli(capsys, gateway_url, "minara-test:blocks")
    assert code == 0, err
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == "Here is one block of each kind."
    assert "**Bold** and a list:\n\n- one\n- two\n" in out  # Markdown as its text
    table = lines.index("Asset  Amount       Value")
    assert lines[table : table + 6] == [
        "Asset  Amount       Value",
        "─────  ──────  ──────────",
        "BTC       0.5  32,000 USD",
        "ETH         4  12,800 USD",
        "SOL        20   3,000 USD",
        "USDC    1,000   1,000 USD",
    ]
    assert "Total   48,800 USD\n24 h        +1.2 %\nAssets           4\n" in out
    assert "Documentation: https://example.com/docs\n" in out
    chart = lines.index("Prices this week")
    btc, eth, span = lines[chart + 1 : chart + 4]
    assert re.fullmatch(r"BTC  ▁[▁-█]+█  60–65", btc), btc
    assert re.fullmatch(r"ETH  █[▁-█]+▁  25–30", eth), eth
    assert span == "     Mon – Sat"
    assert lines[-1] == "A map of Prague."  # an unknown kind's fallback; one without: nothing
    assert "hologram" not in out and "frames" not in out
    assert all(cell_len(line) <= PIPE_WIDTH for line in lines)


async def test_tables_fit_the_terminal(gateway_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a terminal the width is the terminal's: at 24 columns the table is cut with … and
    the chart narrows (text and links are left whole: the terminal wraps them, a URL intact)."""
    monkeypatch.setenv("COLUMNS", "24")
    out, err = Terminal(), io.StringIO()
    code = await ask(gateway_url, "minara-test:blocks", token=TEST_TOKEN, out=out, err=err)
    assert code == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    table = lines.index("Asset  Amount      Value")
    assert lines[table + 2] == "BTC       0.5  32,000 U…"
    chart = lines.index("Prices this week")
    drawn = lines[table : table + 10] + lines[chart : chart + 4]
    assert all(cell_len(line) <= 24 for line in drawn), drawn
    assert lines[chart + 1].startswith("BTC  ▁") and lines[chart + 1].endswith("60–65")
    assert cell_len(lines[chart + 1]) < cell_len("BTC  ") + 36 + cell_len("  60–65")
    assert "Documentation: https://example.com/docs" in lines


def test_todos_print_once_as_they_ended(
    gateway_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ask_cli(capsys, gateway_url, "minara-test:todos")
    assert code == 0, err
    assert out == (
        "Working through the list.\n"
        "\n"
        "To do · 3 of 3 done\n"
        "☑ Check balances\n"
        "☑ Compare prices\n"
        "☑ Write the summary\n"
    )


async def test_an_interjection_is_printed_as_the_persons(gateway_url: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    asking = asyncio.create_task(
        ask(gateway_url, "minara-test:slow", token=TEST_TOKEN, out=out, err=err)
    )
    async with httpx.AsyncClient(base_url=gateway_url, headers=AUTH) as http:
        for _ in range(100):
            sessions = (await http.get("/v1/sessions")).json()["sessions"]
            if sessions and "part 1" in out.getvalue():
                break
            await asyncio.sleep(0.05)
        body = {"session_id": sessions[0]["id"], "message": "Only BTC, please."}
        assert (await http.post("/v1/chat/interject", json=body)).json() == {"status": "injected"}
    assert await asyncio.wait_for(asking, 30) == 0, err.getvalue()
    assert "\n(you, while the agent worked) Only BTC, please.\n" in out.getvalue()


# --- questions ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["select", "confirm"])
def test_a_question_is_said_on_stderr_and_ask_ends_when_it_times_out(
    gateway_url: str, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    # Ends: a question nobody answers times out after its second (a wait that never ended
    # would be stopped by the run's timeout, `timeout` in pyproject.toml).
    code, out, err = ask_cli(capsys, gateway_url, f"minara-test:question {kind} 1")
    assert code == 0, err
    # The text after the question is a new segment: it starts its own line.
    cancelled = " The action is cancelled." if kind == "confirm" else ""
    assert out == f"Asking.\nNo answer: timed out.{cancelled}\n"
    (session,) = stored_sessions(gateway_url)
    lines = err.splitlines()
    asked = re.fullmatch(rf"talkie: the agent asks \({kind}, id (q_\w+)\): open until .+", lines[0])
    assert asked, err
    question_id = asked.group(1)
    if kind == "select":
        assert lines[1] == "  Which account? [Salary | Savings | Travel]"
    else:
        assert lines[1] == "  Run the test action? [Confirm | Cancel]"
        assert "  Unanswered, it expires and the action is cancelled." in lines
    hint = f"talkie connect {gateway_url} --thread {session['id']}"
    assert any("answer it in the TUI" in line and line.endswith(hint) for line in lines), err
    assert lines[-1] == f"talkie: question {question_id}: Timed out"


# --- exit codes -----------------------------------------------------------------------------


def test_a_failed_turn_exits_1_with_the_gateways_words(
    gateway_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ask_cli(capsys, gateway_url, "minara-test:error")
    assert code == 1
    assert out == "Partial.\n"
    assert err == "talkie: The agent failed on purpose. (agent_failed)\n  Trying again may help.\n"


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["--token", "wrong"], id="wrong-token"),
        pytest.param(["--token", "wrong", "--protocol", "minara"], id="wrong-token-forced"),
        pytest.param([], id="no-token"),
    ],
)
def test_a_refused_token_exits_3_with_the_gateways_hint(
    gateway_url: str, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    for command in (["ask", gateway_url, "hello"], ["threads", gateway_url]):
        assert main([*command, *args]) == 3
        out, err = capsys.readouterr()
        assert out == ""
        assert err.startswith("talkie: sign-in needed: "), err
        assert "--token or $MINARA_TOKEN" in err and "talkie login" not in err


def test_a_talkie_server_keeps_its_sign_in_hint() -> None:
    refused = UnauthorizedError("Sign in first.", status=401, code="unauthorized", retryable=False)
    for protocol in ("talkie", None):
        stream = io.StringIO()
        assert report_error(refused, "crm.example.com", stream, protocol=protocol) == 3
        assert stream.getvalue() == (
            "talkie: sign-in needed: Sign in first.\n"
            "  Sign in with `talkie login crm.example.com`, or pass a development token with"
            " --token.\n"
        )


def test_the_token_variable_is_used(
    gateway_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MINARA_TOKEN", TEST_TOKEN)
    assert main(["ask", gateway_url, "minara-test:echo hello there"]) == 0
    assert capsys.readouterr().out == "hello there\n"


# --- --json and threads ---------------------------------------------------------------------


def test_json_prints_one_minara_event_per_line(
    gateway_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ask_cli(capsys, gateway_url, "minara-test:todos", "--json")
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert all(set(event) == {"type", "data"} for event in events)
    types = [event["type"] for event in events]
    assert types[0] == "start" and types[-1] == "done"
    assert types.count("todos") == 3 and "text_delta" in types
    assert events[-2]["data"]["items"][0] == {"text": "Check balances", "done": True}


def test_json_of_a_failed_turn_ends_with_its_error_event(
    gateway_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = ask_cli(capsys, gateway_url, "minara-test:error", "--json")
    assert code == 1
    last = json.loads(out.splitlines()[-1])
    assert last == {
        "type": "error",
        "data": {
            "code": "agent_failed",
            "message": "The agent failed on purpose.",
            "retryable": True,
        },
    }
    assert "The agent failed on purpose." in err


def test_threads_lists_the_gateways_sessions(
    gateway_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["threads", gateway_url, "--token", TEST_TOKEN]) == 0
    assert capsys.readouterr().out == "No threads yet.\n"
    for message in ("minara-test:echo one", "minara-test:echo two"):
        assert ask_cli(capsys, gateway_url, message)[0] == 0
    assert main(["threads", gateway_url, "--token", TEST_TOKEN]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    sessions = stored_sessions(gateway_url)
    assert [row[0] for row in rows] == [s["id"] for s in sessions]
    assert [(row[2], row[3]) for row in rows] == [
        ("chat", "minara-test:echo two"),
        ("chat", "minara-test:echo one"),
    ]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", row[1]) for row in rows)


# --- a closed pipe --------------------------------------------------------------------------


def stored_answer(url: str, timeout: float = 20) -> str:
    """The assistant row of the gateway's only session, once it is stored."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sessions = stored_sessions(url)
        if sessions:
            detail = httpx.get(f"{url}/v1/sessions/{sessions[0]['id']}", headers=AUTH).json()
            answers = [row for row in detail["messages"] if row["role"] == "assistant"]
            if answers:
                return str(answers[-1]["content"])
        time.sleep(0.2)
    raise AssertionError(f"no answer stored within {timeout} s")


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX SIGPIPE")
@pytest.mark.parametrize("json_lines", [False, True], ids=["text", "json"])
def test_ask_into_a_closed_pipe_ends_quietly_and_the_turn_goes_on(
    gateway_url: str, json_lines: bool
) -> None:
    """`talkie ask GATEWAY … | head -1`: no traceback, SIGPIPE (141 in a shell), and the gateway
    finishes the turn (closing the pipe disconnects; it does not interrupt)."""
    args = ["ask", gateway_url, "minara-test:count 40 50", "--token", TEST_TOKEN]
    status, err = talkie_into_closed_pipe(*args, *(["--json"] if json_lines else []), read=6)
    assert_quiet(status, err)
    assert err == ""
    assert stored_answer(gateway_url) == "".join(f"{n} " for n in range(1, 41))


def test_head_in_a_real_shell_sees_141(gateway_url: str) -> None:
    """The same through `bash -c '… | head -1'`: the shell sees talkie killed by SIGPIPE."""
    talkie = f"{shlex.quote(sys.executable)} -m talkie_tui.cli"
    ask_line = f"{talkie} ask {gateway_url} 'minara-test:count 40 50' --token {TEST_TOKEN} --json"
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {ask_line} | head -1; echo status $?"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=os.environ["TALKIE_HOME"],  # the installed talkie, not whatever the folder holds
    )
    first, status = done.stdout.splitlines()
    assert json.loads(first)["type"] == "start"
    assert status == "status 141", done.stderr
    assert "Traceback" not in done.stderr
