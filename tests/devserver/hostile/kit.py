"""What the hostile-input suite sends to the reference servers, and what it checks of each
answer. The JSON and text pieces build on the client fuzz kit (`tests/fuzz/kit.py`).

Examples are few and derandomized (the same every run) in `make test`; `make fuzz` sets
HOSTILE_EXAMPLES and each property then explores that many new examples.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import settings
from hypothesis import strategies as st
from starlette.routing import BaseRoute, Route, WebSocketRoute

from tests.devserver.hostile.payloads import HUGE_NUMBER, LONE_SURROGATE, deep
from tests.fuzz.kit import fuzz_settings, json_like, nasty_text

FUZZING = int(os.environ.get("HOSTILE_EXAMPLES", "0"))


def hostile_settings(examples: int) -> settings:
    """`examples` derandomized examples, or HOSTILE_EXAMPLES exploring ones under `make fuzz`."""
    if FUZZING:
        return fuzz_settings(FUZZING, derandomize=False)
    return fuzz_settings(examples, derandomize=True)


# --- JSON ----------------------------------------------------------------------------------

RAW_LITERALS = [
    deep(50_000),
    deep(65),
    HUGE_NUMBER,
    "-" + HUGE_NUMBER,
    "0." + HUGE_NUMBER,
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    LONE_SURROGATE,
    '"\\udc00"',
    '"\\ud800\\u0041"',
    '"a\\u0000b"',
    '{"\\ud800": 1}',
    "9" * 101,
    "18446744073709551616",
    "-9223372036854775809",
    "true",
    "null",
    "[]",
    "{}",
    '""',
]
"""JSON text that decoders get wrong: spliced raw into documents as a field's value."""

FIELDS = [
    # Cuckoo
    "email", "code", "device_name", "text", "attachments", "idempotency_key", "stream",
    "reply_to", "buttons", "quick_replies", "schedule_id", "state", "label", "mode",
    "webhook_url", "handle", "display_name", "description", "starters", "name", "title",
    "instruction", "cadence", "status", "locale", "avatar_media_id", "read_up_to", "action",
    "max_uses", "payload", "expires_at", "supports_schedules", "op", "cid", "conversation_id",
    "message_id", "ack",
    # Minara
    "message", "session_id", "kind", "model", "reasoning_effort", "voice_input_key",
    "client_message_id", "answers", "questionIndex", "selected_labels", "free_text", "value",
    "count", "type", "channel", "key", "fromSeq",
    # Talkie
    "threadId", "runId", "messages", "tools", "context", "state", "forwardedProps",
    "decision", "paramsHash", "method", "thread_id", "seconds", "final", "role", "content", "id",
]  # fmt: skip
"""Field names of the three protocols: documents mix them with unknown ones."""

field_names = st.one_of(st.sampled_from(FIELDS), nasty_text)
values = st.one_of(
    json_like().map(lambda value: json.dumps(value)),
    st.sampled_from(RAW_LITERALS),
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A JSON object (as text) of known and unknown fields, wrong types and raw literals."""
    pairs = draw(st.lists(st.tuples(field_names, values), max_size=6))
    return "{" + ",".join(f"{json.dumps(name)}:{value}" for name, value in pairs) + "}"


json_texts = st.one_of(documents(), values, nasty_text)
"""Any JSON-ish text: documents, bare values, raw literals, broken text."""

HUB_FRAME_CAP = 64 * 1024


def fits_a_hub_frame(text: str) -> bool:
    """Whether a frame is within the hub's 64 KiB cap (a larger one closes with 1009)."""
    return len(text.encode("utf-8", "surrogatepass")) <= HUB_FRAME_CAP


hub_frames = json_texts.filter(fits_a_hub_frame)
"""JSON-ish frames a hub socket reads (the oversized ones have tests of their own)."""

bodies = st.one_of(
    json_texts.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(max_size=2048),
    st.just(b""),
)
"""Request bodies: JSON-ish text or arbitrary bytes."""

CHARSETS = ["utf-8", "UTF-8", "unicode_escape", "raw_unicode_escape", "utf-16", "utf-7", "x", ""]
"""RFC 2231 charsets of a part's `filename*`: Python decodes with any codec named there."""

BOUNDARY = "hostile-boundary"


def multipart_body(filename_param: str, part_type: str, data: bytes) -> bytes:
    """A multipart body of one `file` part with this filename parameter, type and bytes."""
    head = f'Content-Disposition: form-data; name="file"; {filename_param}\r\n'
    head += f"Content-Type: {part_type}"
    opening = f"--{BOUNDARY}\r\n{head}\r\n\r\n".encode("utf-8", "surrogatepass")
    return opening + data + f"\r\n--{BOUNDARY}--\r\n".encode()


def rfc2231_name(charset: str, raw: bytes) -> str:
    """A `filename*` parameter: the bytes percent-encoded, said to be in `charset`."""
    return f"filename*={charset}''{quote(raw, safe='')}"


HOSTILE_FILENAMES = [
    rfc2231_name("unicode_escape", b"\\ud800.txt"),
    rfc2231_name("raw_unicode_escape", b"\\udc00.txt"),
    rfc2231_name("utf-8", b"\xed\xa0\x80.txt"),
    rfc2231_name("utf-16", b"\x00\xd8"),
    rfc2231_name("no-such-charset", b"\xff"),
    'filename="../../etc/passwd"',
    'filename="' + "a" * 5000 + '"',
]
"""Filename parameters that reach a server's decoding of multipart headers."""


@st.composite
def multipart_bodies(draw: st.DrawFn) -> bytes:
    """A well-formed multipart body whose `file` part has a hostile name, type and bytes."""
    if draw(st.booleans()):
        raw = draw(st.one_of(st.binary(max_size=40), st.just(b"\\ud800\xed\xa0\x80")))
        name = rfc2231_name(draw(st.sampled_from(CHARSETS)), raw)
    else:
        name = f"filename={json.dumps(draw(nasty_text))}"
    part_type = draw(st.one_of(st.sampled_from(["text/html", "image/svg+xml"]), nasty_text))
    return multipart_body(name, part_type, draw(st.binary(min_size=1, max_size=256)))


MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"

content_types = st.sampled_from(
    ["application/json", "application/json", "text/plain", "multipart/form-data; boundary=x", ""]
)

# --- paths and queries -----------------------------------------------------------------------

ODD_VALUES = [
    "", "0", "-1", "1", "100", "101", "1000000", "1e3", "0x10", "NaN", "true", "²", "٣",
    "9" * 5000, "a" * 3000, "..", "../..", "%00", "%2e%2e", " ", "\x00", "é", "😀",
    "usr_" + "0" * 26, "med_" + "z" * 26, "cnv_", "evt_0", "msg_" + "!" * 26, "chat_x",
    "chat/files/../../etc/passwd", "null", "[]", "{}",
]  # fmt: skip
"""Odd paging values and ids."""

QUERY_NAMES = [
    "limit", "before", "after", "since", "cursor", "q", "offset", "variant", "name", "kind",
    "duration_ms", "waveform", "fromSeq", "persist", "language", "token", "code", "thread",
]  # fmt: skip

query_values = st.one_of(st.sampled_from(ODD_VALUES), nasty_text)
queries = st.dictionaries(st.sampled_from(QUERY_NAMES), query_values, max_size=4)


def ids_among(known: list[str]) -> st.SearchStrategy[str]:
    """Path ids: the server's real ones and odd ones."""
    return st.one_of(st.sampled_from(known or ["x"]), st.sampled_from(ODD_VALUES), nasty_text)


_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


def fill(path: str, value: Callable[[str], str]) -> str:
    """A route path with each `{param}` replaced by `value(name)`, URL-encoded."""
    return _PARAM.sub(lambda match: quote(value(match[1]), safe=""), path)


# --- routes and answers ----------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """One method of one HTTP route."""

    method: str
    path: str


def endpoints(routes: list[BaseRoute]) -> list[Endpoint]:
    """Every method of every HTTP route of an app (HEAD aside: it is GET without a body)."""
    found = []
    for route in routes:
        if isinstance(route, Route):
            found += [Endpoint(m, route.path) for m in sorted(route.methods or ()) if m != "HEAD"]
    return found


def socket_paths(routes: list[BaseRoute]) -> list[str]:
    """The path of every WebSocket route of an app."""
    return [route.path for route in routes if isinstance(route, WebSocketRoute)]


ShapeCheck = Callable[[httpx.Response], None]


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The `error` object of an error answer (the answer must be JSON with one)."""
    body = response.json()
    assert isinstance(body, dict) and isinstance(body.get("error"), dict), response.text[:300]
    error: dict[str, Any] = body["error"]
    assert isinstance(error.get("code"), str) and isinstance(error.get("message"), str), error
    return error


def answer_checked(
    http: httpx.Client, method: str, url: str, shape: ShapeCheck, **kwargs: Any
) -> int:
    """Send one request and check its answer: never a 5xx, errors in the protocol's shape; its
    status. An event stream is not read (a hostile request that starts a run is still fine)."""
    with http.stream(method, url, **kwargs) as response:
        assert response.status_code < 500, (method, url, response.status_code)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response.status_code
        response.read()
    if response.status_code >= 400:
        shape(response)
    return response.status_code
