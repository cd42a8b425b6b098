"""Debug logs (`talkie --debug`): one private file per run, every secret redacted.

Without `--debug` nothing is written. With it, `setup_logging` opens
`<state folder>/logs/talkie-YYYYmmdd-HHMMSS.log` (mode 0600, the last `KEEP` runs kept) and
sends talkie's own records and those of httpx/httpcore (every request: method, URL, status,
time) to it. A filter on every handler passes each record through `redact` first, so a
bearer token, an OAuth code or a voice client secret never reaches the file, whichever
library logged it.

Whether or not `--debug` is on, an unexpected exception gets a crash report
(`crash-YYYYmmdd-HHMMSS.log`, same folder, same redaction): the one file a bug report needs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import re
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path

from talkie_tui.config import ensure_private_dir, state_dir

__all__ = [
    "KEEP",
    "REDACTED",
    "RedactFilter",
    "add_secret",
    "close_logging",
    "log_folder",
    "redact",
    "setup_logging",
    "write_crash_report",
]

KEEP = 10
REDACTED = "[redacted]"
_FORMAT = "%(asctime)s.%(msecs)03d %(levelname)-7s %(name)s: %(message)s"
_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
# Loggers worth reading at DEBUG; everything else (asyncio, aioice…) from INFO up.
_DEBUG_LOGGERS = ("talkie_tui", "httpx", "httpcore")
# Secrets that arrive in the environment; redacted wherever they appear verbatim.
_SECRET_VARIABLES = ("TALKIE_TOKEN", "TALKIE_OAUTH_CLIENT_SECRET")

# Names whose values are secrets in query strings and form bodies.
_FORM_KEYS = (
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "clientSecret",
    "client_assertion",
    "code_verifier",
    "code",
    "token",
    "password",
)
# The same in JSON and Python reprs, except "code": there it is an error code (talkie/1 §3,
# OAuth errors), which the log needs; an authorization code only travels in query strings
# and forms.
_JSON_KEYS = tuple(key for key in _FORM_KEYS if key != "code")


def _header(match: re.Match[str]) -> str:
    # The scheme stays readable (Bearer or Basic matters when debugging); its value does not.
    scheme = f"{match.group(3)} " if match.group(3) else ""
    return f"{match.group(1)}{match.group(2)}{scheme}{REDACTED}"


_PATTERNS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    # Header values: "Authorization: Bearer x", httpcore's (b'authorization', b'Bearer x').
    (
        re.compile(
            r"""(?i)\b((?:proxy-)?authorization|cookie|set-cookie|x-api-key)"""
            r"""(["']?\s*[:=,]\s*(?-i:b)?["']?)(?:(Bearer|Basic|Digest|DPoP|Token)\s+)?"""
            r"""[^"'\r\n]+"""
        ),
        _header,
    ),
    # A credential after its scheme wherever it appears ("Basic realm=…" is not one).
    (
        re.compile(r"(?i)\b(Bearer|Basic|Digest|DPoP)\s+(?!realm\b)[A-Za-z0-9\-._~+/=%]+"),
        rf"\1 {REDACTED}",
    ),
    # key=value in query strings and form bodies.
    (
        re.compile(
            rf"(?i)(?<![\w.-])({'|'.join(_FORM_KEYS)})=(?!{re.escape(REDACTED)})[^&\s\"'#;,)]+"
        ),
        rf"\1={REDACTED}",
    ),
    # "key": "value" in JSON, 'key': 'value' in reprs.
    (
        re.compile(rf"""(?i)(["'](?:{"|".join(_JSON_KEYS)})["']\s*:\s*)(["'])(?:\\.|(?!\2).)*\2"""),
        rf"\1\2{REDACTED}\2",
    ),
    # The password in a URL (a proxy's, typically).
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]+):[^/\s@]+@"), rf"\1:{REDACTED}@"),
    # Ephemeral voice keys (OpenAI realtime client secrets) and JWTs, wherever they are.
    (re.compile(r"\bek_[A-Za-z0-9_\-]{4,}"), f"ek_{REDACTED}"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), REDACTED),
)

_secrets: set[str] = set()
_handler: logging.Handler | None = None
_levels: dict[str, int] = {}


def add_secret(value: str | None) -> None:
    """Redact `value` wherever it appears in the log (a token given on the command line)."""
    # Very short values would blank out ordinary words; no real secret is that short.
    if value and len(value.strip()) >= 6:
        _secrets.add(value.strip())


def redact(text: str) -> str:
    """`text` with tokens, codes, secrets and passwords replaced by "[redacted]"."""
    for secret in sorted(_secrets, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactFilter(logging.Filter):
    """Rewrites each record's message (and traceback) through `redact`; drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact the record in place, so every later handler sees the redacted text too."""
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its format
            message = f"{record.msg!r} {record.args!r}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def log_folder() -> Path:
    """Where `--debug` writes its logs."""
    return state_dir() / "logs"


def _new_log_file(folder: Path, kind: str = "talkie") -> Path:
    """Create an empty 0600 log file named after its kind and the current time."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(100):
        path = folder / (f"{kind}-{stamp}.log" if attempt == 0 else f"{kind}-{stamp}-{attempt}.log")
        try:
            # O_EXCL: two talkies started in the same second never share (or clobber) a file.
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        os.close(descriptor)
        return path
    raise FileExistsError(f"no free log file name in {folder}")


def _prune(folder: Path, keep: int, kind: str = "talkie") -> None:
    """Delete all but the newest `keep` logs of a kind."""
    # The names hold the start time, so name order is age order (and needs no stat()).
    logs = sorted(folder.glob(f"{kind}-*.log"))
    for old in logs[:-keep]:
        with contextlib.suppress(OSError):  # another talkie may be pruning too
            old.unlink()


def _add_filter(handlers: Iterable[logging.Handler]) -> None:
    for handler in handlers:
        if not any(isinstance(f, RedactFilter) for f in handler.filters):
            handler.addFilter(RedactFilter())


def setup_logging(debug: bool) -> Path | None:
    """With `debug`, log to a new private file and return its path; else do nothing (None)."""
    global _handler
    if not debug:
        return None
    close_logging()
    folder = ensure_private_dir(log_folder())
    path = _new_log_file(folder)
    _prune(folder, KEEP)
    for variable in _SECRET_VARIABLES:
        add_secret(os.environ.get(variable))
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(_FORMAT, _DATE_FORMAT))
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(handler)
    for name in ("", *_DEBUG_LOGGERS):
        logger = logging.getLogger(name)
        _levels[name] = logger.level
        logger.setLevel(logging.DEBUG if name else min(logger.level, logging.INFO))
    # Every handler, not only ours: a record is redacted before any of them writes it.
    _add_filter(root.handlers)
    logging.captureWarnings(True)
    _handler = handler
    return path


def close_logging() -> None:
    """Stop writing the debug log (tests; a second `setup_logging`)."""
    global _handler
    if _handler is not None:
        logging.getLogger().removeHandler(_handler)
        _handler.close()
        _handler = None
    for name, level in _levels.items():
        logging.getLogger(name).setLevel(level)
    if _levels:
        logging.captureWarnings(False)
    _levels.clear()


def write_crash_report(error: BaseException, version: str) -> Path | None:
    """Write `error`'s traceback (redacted) to a new crash report; None if it cannot be written.

    The debug log, when one is open, gets the traceback too.
    """
    logging.getLogger("talkie_tui").error("unexpected error", exc_info=error)
    for variable in _SECRET_VARIABLES:
        add_secret(os.environ.get(variable))
    report = "".join(
        (
            f"talkie {version}, Python {platform.python_version()} on {platform.platform()}\n",
            "\n",
            *traceback.format_exception(error),
        )
    )
    try:
        folder = ensure_private_dir(log_folder())
        path = _new_log_file(folder, "crash")
        _prune(folder, KEEP, "crash")
        path.write_text(redact(report), encoding="utf-8")
    except OSError:
        return None
    return path
