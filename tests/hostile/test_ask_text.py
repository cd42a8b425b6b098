"""`talkie ask` against servers whose every string carries control sequences and markup.

Rule (DESIGN "Rules that hold everywhere", spec §5/§6/§8/§3): server text is data; no ESC, C0
(except newline and tab) or C1 character from the server reaches stdout or stderr.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.helpers import TEST_TOKEN
from tests.hostile.kit import (
    FORBIDDEN,
    HOSTILE_RUN,
    answer,
    ask_cli,
    controls,
    frames,
    hostile,
    hostile_app,
    says,
    shown,
)
from tests.protocol.conftest import Serve
from tests.stub_server import ENDPOINTS, envelope

pytestmark = pytest.mark.hostile


# A producer that writes raw control bytes into its JSON strings (invalid JSON): the client
# reads it tolerantly, and must clean it just the same.
RAW_CONTROLS_RUN = (
    frames(answer(*says("ok ", "m_a")))
    .replace('"RUN_FINISHED"', '"RUN_FINISHED_LATER"')
    .replace(
        'data: {"type": "RUN_FINISHED_LATER"',
        'data: {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m_a", "delta": '
        '"raw\x1b[2J\x1b]52;c;cHduZWQ=\x07\x9b31m!"}\n\ndata: {"type": "RUN_FINISHED"',
    )
)


async def test_every_string_of_an_answer_reaches_stdout_clean(serve: Serve) -> None:
    """§5/§6/§8: text, cards (fallbackText), actions and links print without control bytes."""
    server = serve(hostile_app(HOSTILE_RUN))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 0, asked.err
    assert asked.unsafe() == []
    for tag in ("text", "fallback", "summary", "link"):
        assert shown(tag) in asked.out, tag  # the markup shows as characters
    assert "[action a_1" in asked.out
    assert "https://e.example/" in asked.out


async def test_raw_control_bytes_inside_json_strings_are_cleaned(serve: Serve) -> None:
    """§5: a sloppy producer's raw ESC/C1 bytes in its JSON never reach stdout."""
    server = serve(hostile_app(RAW_CONTROLS_RUN))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 0, asked.err
    assert asked.unsafe() == []
    assert "ok raw" in asked.out and "!" in asked.out


async def test_json_output_escapes_every_control_of_known_strings(serve: Serve) -> None:
    """`--json`: ESC and C0 in the texts the client shows are gone or JSON-escaped."""
    server = serve(hostile_app(HOSTILE_RUN))
    asked = await ask_cli(server.origin, "hello", as_json=True)
    assert asked.code == 0, asked.err
    # One event per "\n"-terminated line (str.splitlines would also split at U+0085 & co).
    lines = [json.loads(line) for line in asked.out.rstrip("\n").split("\n")]
    assert len(lines) >= 8
    assert "\x1b" not in asked.out and "\x07" not in asked.out and "\r" not in asked.out


async def test_json_output_has_no_raw_c1_controls(serve: Serve) -> None:
    """`--json` (DESIGN: nothing reaches stdout raw): C1 controls are escaped like C0 ones."""
    run = frames(
        answer(
            {"type": "STEP_STARTED", "stepName": "step\x9b2J"},
            {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "t"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "args\x9b31m\x85"},
            {"type": "TOOL_CALL_END", "toolCallId": "c"},
            *says("fine"),
        )
    )
    server = serve(hostile_app(run))
    asked = await ask_cli(server.origin, "hello", as_json=True)
    assert asked.code == 0, asked.err
    assert json.loads(asked.out.split("\n")[0])["type"] == "RUN_STARTED"
    assert asked.unsafe() == []


async def test_a_run_error_prints_the_servers_words_clean(serve: Serve) -> None:
    """§5 RUN_ERROR: message and code on stderr, cleaned; exit 1; markup literal."""
    run = frames(
        [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            *says("partial "),
            {
                "type": "RUN_ERROR",
                "message": hostile("failed"),
                "code": "upstream\x1b[2J_unavailable",
                "metadata": {"retryable": True},
            },
        ]
    )
    server = serve(hostile_app(run))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert asked.unsafe() == []
    assert shown("failed") in asked.err
    assert "(upstream_unavailable)" in asked.err and "Trying again may help." in asked.err
    assert "partial" in asked.out


async def test_an_error_envelope_before_the_stream_prints_clean(serve: Serve) -> None:
    """§3: the envelope's message and code reach stderr cleaned; exit 1."""

    async def refuse(request: Request) -> Response:
        body = envelope("forbidden\x1b]52;c;cHduZWQ=\x07", hostile("refused"))
        return JSONResponse(body, status_code=403)

    server = serve(hostile_app(refuse))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert asked.unsafe() == []
    assert shown("refused") in asked.err and "HTTP 403" in asked.err


async def test_a_hostile_manifest_is_refused_with_clean_words(serve: Serve) -> None:
    """§1: a refusal that quotes the manifest (an unknown spec) is printed cleaned."""

    def manifest(origin: str) -> dict[str, object]:
        return {"spec": hostile("talkie/2"), "issuer": origin, "serverId": "x", "name": "x"}

    server = serve(hostile_app(manifest=manifest))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert asked.unsafe() == []
    assert "this client speaks talkie/1" in asked.err


@pytest.mark.parametrize("location", ["/x\x1b[2J\x07", "/x\x9b31m\x85"])
async def test_a_redirect_location_is_quoted_clean(serve: Serve, location: str) -> None:
    """§2.1: the refusal of a redirected run quotes its Location without control bytes."""

    async def redirect(request: Request) -> Response:
        return Response(status_code=307, headers={"location": location})

    server = serve(hostile_app(redirect))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert asked.unsafe() == []
    # httpx itself may refuse to read such a Location; either way it is said, clean.
    assert "does not follow" in asked.err or "location header" in asked.err
    assert len(server.paths("POST")) <= 3  # no endless re-sending


def test_the_real_command_writes_no_control_bytes(serve: Serve, tmp_path: Path) -> None:
    """The installed `talkie ask` as a subprocess: stdout/stderr bytes carry no ESC or C1."""
    server = serve(hostile_app(HOSTILE_RUN))
    talkie = Path(sys.executable).parent / "talkie"
    result = subprocess.run(
        [str(talkie), "ask", server.origin, "hello", "--token", TEST_TOKEN],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out, err = result.stdout.decode("utf-8"), result.stderr.decode("utf-8")
    assert controls(out + err) == []
    assert b"\x1b" not in result.stdout + result.stderr
    assert shown("text") in out
    assert not FORBIDDEN.search(out)


async def test_threads_with_hostile_titles_print_clean(serve: Serve) -> None:
    """§9: `talkie threads` prints thread titles without control bytes."""
    import io

    from talkie_tui.commands.threads import list_threads

    async def rows(request: Request) -> Response:
        row = {"id": "t1\x1b[2J", "title": hostile("title"), "channel": "chat\x9b"}
        return JSONResponse({"threads": [row]})

    server = serve(hostile_app(routes=[Route(ENDPOINTS["threads"], rows)]))
    out, err = io.StringIO(), io.StringIO()
    code = await list_threads(server.origin, token=TEST_TOKEN, out=out, err=err)
    assert code == 0, err.getvalue()
    assert controls(out.getvalue() + err.getvalue()) == []
    assert shown("title") in out.getvalue()
