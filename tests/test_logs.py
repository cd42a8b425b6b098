"""`talkie --debug`: a private log per run, with every secret redacted (issue 6, item 4)."""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from talkie_tui import logs
from talkie_tui.cli import main
from talkie_tui.logs import REDACTED, redact, setup_logging


@pytest.fixture(autouse=True)
def _no_log_left_open() -> Iterator[None]:
    """A test that opens the debug log closes it again (logging is process-wide)."""
    yield
    logs.close_logging()
    logs._secrets.clear()


@pytest.mark.parametrize(
    ("text", "secret", "kept"),
    [
        # Headers, as text and as httpcore logs them.
        ("Authorization: Bearer abc.DEF-123", "abc.DEF-123", "Authorization: Bearer"),
        ("(b'authorization', b'Bearer tok123456')", "tok123456", "b'Bearer [redacted]'"),
        ('headers={"Authorization": "Bearer tok123456"}', "tok123456", "Authorization"),
        ("Proxy-Authorization: Basic YWxpY2U6czNjcmV0", "YWxpY2U6czNjcmV0", "Basic"),
        ("Cookie: session=abcdef; theme=dark", "abcdef", "Cookie:"),
        ("sent Bearer tok123456 upstream", "tok123456", "Bearer [redacted]"),
        # Query strings.
        ("GET https://a.test/cb?code=c0de99&state=s1", "c0de99", "state=s1"),
        ("GET https://a.test/x?access_token=at99&y=1", "at99", "y=1"),
        ("GET https://a.test/x?token=tk99", "tk99", "token=[redacted]"),
        ("https://a.test/x?id_token=idt99#frag", "idt99", "id_token=[redacted]"),
        # Form bodies.
        ("grant_type=refresh_token&refresh_token=rt99&client_id=app", "rt99", "client_id=app"),
        ("grant_type=authorization_code&code=ac99&code_verifier=cv99", "ac99", "grant_type"),
        ("grant_type=authorization_code&code=ac99&code_verifier=cv99", "cv99", "code_verifier="),
        ("client_id=app&client_secret=cs99", "cs99", "client_id=app"),
        ("token=rv99&token_type_hint=refresh_token", "rv99", "token_type_hint=refresh_token"),
        # JSON and Python reprs.
        ('{"access_token": "at99", "token_type": "Bearer"}', "at99", '"token_type"'),
        ('{"refresh_token":"rt99","expires_in":3600}', "rt99", '"expires_in":3600'),
        ('{"id_token": "x\\"y99"}', 'x\\"y99', '"id_token": "[redacted]"'),
        ("{'client_secret': 'cs99'}", "cs99", "'client_secret': '[redacted]'"),
        ('{"clientSecret": "cs99"}', "cs99", '"clientSecret"'),
        ('{"code_verifier": "cv99"}', "cv99", '"code_verifier"'),
        ('{"token": "tk99"}', "tk99", '"token"'),
        # Voice client secrets (ek_…) wherever they are, JWTs, proxy passwords in URLs.
        ('{"clientSecret": {"value": "ek_68af3c21d"}}', "68af3c21d", "ek_[redacted]"),
        ("POST /v1/realtime key ek_68af3c21d", "68af3c21d", "ek_[redacted]"),
        (
            "jwt eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl",
            "eyJzdWIiOiJhbGljZSJ9",
            "jwt",
        ),
        ("via http://alice:hunter22@proxy:3128", "hunter22", "http://alice:[redacted]@proxy"),
    ],
)
def test_every_secret_form_is_redacted(text: str, secret: str, kept: str) -> None:
    """The secret is gone; the text around it stays readable."""
    redacted = redact(text)
    assert secret not in redacted
    assert kept in redacted
    assert REDACTED in redacted


@pytest.mark.parametrize(
    "text",
    [
        # In JSON, "code" is an error code (talkie/1 §3, OAuth errors): the log needs it.
        '{"error": {"code": "rate_limited", "message": "Slow down"}}',
        'Proxy-Authenticate: Basic realm="corp"',
        "grant_type=refresh_token&token_type_hint=refresh_token",
        "auth_code_flow=1 barcode=1234",
        "GET https://a.test/.well-known/talkie.json -> 200",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    """Error codes, realms and key names that only look like secrets are not redacted."""
    assert redact(text) == text


def test_a_token_from_the_command_line_is_redacted_anywhere() -> None:
    """`--token` / TALKIE_TOKEN: the value itself, wherever some library prints it."""
    logs.add_secret("plain-dev-token-42")
    assert redact("x plain-dev-token-42 y") == f"x {REDACTED} y"


def test_the_filter_redacts_arguments_and_tracebacks() -> None:
    """Redaction happens on the formatted record, exceptions included, for every handler."""
    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, "HTTP Request: %s", ("GET /x?code=abc99",), None
    )
    try:
        raise ValueError("refresh_token=rt-in-traceback")
    except ValueError:
        record.exc_info = sys.exc_info()
    assert logs.RedactFilter().filter(record)
    formatted = logging.Formatter().format(record)
    assert "abc99" not in formatted and "rt-in-traceback" not in formatted
    assert "code=[redacted]" in formatted and "refresh_token=[redacted]" in formatted


def test_without_debug_nothing_is_written(talkie_home: Path) -> None:
    """No --debug, no log file (not even the folder)."""
    assert setup_logging(False) is None
    assert not (talkie_home / "logs").exists()


def test_only_the_last_ten_logs_are_kept(talkie_home: Path) -> None:
    """Each run adds one 0600 log; older ones beyond ten are deleted."""
    folder = talkie_home / "logs"
    folder.mkdir()
    for day in range(1, 13):
        (folder / f"talkie-202601{day:02d}-120000.log").write_text("old\n")
    path = setup_logging(True)
    assert path is not None and path.parent == folder
    remaining = sorted(p.name for p in folder.glob("talkie-*.log"))
    assert len(remaining) == logs.KEEP and path.name in remaining
    assert "talkie-20260101-120000.log" not in remaining
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_talkie_ask_without_debug_writes_no_log(
    devserver: Callable[..., str], talkie_home: Path
) -> None:
    """The command itself: nothing in the state folder after a normal run."""
    url = devserver(test_mode=True, dev_token="tk-7f3a9c1e5b2d")
    assert main(["ask", url, "talkie-test:echo hi", "--token", "tk-7f3a9c1e5b2d"]) == 0
    assert not (talkie_home / "logs").exists()


def test_debug_writes_a_private_log_with_requests_and_no_secret(
    devserver: Callable[..., str], talkie_home: Path
) -> None:
    """`talkie --debug ask`: the path is shown on stderr, the file is 0600, it has the request
    lines (method, URL, status, time), and neither the token nor a secret in a URL."""
    token = "tk-7f3a9c1e5b2d"
    url = devserver(test_mode=True, dev_token=token)
    manifest = f"{url}/.well-known/talkie.json?access_token=qs-secret-8d1e"
    done = subprocess.run(
        [sys.executable, "-m", "talkie_tui.cli", "--debug", "ask", manifest, "talkie-test:echo hi"],
        env={**os.environ, "TALKIE_HOME": str(talkie_home), "TALKIE_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    shown = re.search(r"talkie: writing a debug log to (\S+)", done.stderr)
    assert shown is not None, done.stderr
    path = Path(shown.group(1))
    assert path.parent == talkie_home / "logs"
    assert re.fullmatch(r"talkie-\d{8}-\d{6}\.log", path.name)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700

    text = path.read_text(encoding="utf-8")
    assert token not in text and "qs-secret-8d1e" not in text
    assert re.search(r"GET \S+/\.well-known/talkie\.json\?access_token=\[redacted\] -> 200", text)
    assert re.search(r"POST \S+/api/talkie/run -> 200 \(headers after \d+ ms\)", text)
    assert "HTTP Request: POST" in text  # httpx's own line, redacted like ours
