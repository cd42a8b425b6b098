"""Manifest validation (`protocol/manifest.py validate_manifest`) and endpoint resolution on
arbitrary JSON.

Rules (§1): anything that is not a usable talkie/1 manifest is a DiscoveryError (never another
exception); an accepted manifest belongs to the origin it came from and shows clean text; an
endpoint URL is never on another origin unless that origin was accepted; `{name}` values stay
one path segment.
"""

from __future__ import annotations

import contextlib
from typing import Any

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from talkie_tui.core.errors import DiscoveryError
from talkie_tui.core.urls import origin_of
from talkie_tui.protocol.talkie.manifest import (
    DiscoveredServer,
    _foreign_endpoints,
    resolve_endpoint,
    validate_manifest,
)
from tests.fuzz.kit import fuzz_settings, json_like, nasty_text, unsafe

pytestmark = pytest.mark.fuzz

ORIGIN = "https://crm.example.com"
OTHER = "http://127.0.0.2:8000"
TOP_KEYS = [
    "spec",
    "issuer",
    "serverId",
    "name",
    "description",
    "locale",
    "brand",
    "auth",
    "endpoints",
    "capabilities",
    "limits",
    "testMode",
]
TEMPLATE_PIECES = [
    "/api/",
    "{threadId}",
    "{x}",
    "//",
    "/",
    "\\",
    "@",
    ":",
    "?",
    "#",
    "..",
    "%2F",
    "http://",
    "https://",
    "HTTP://",
    "127.0.0.2",
    "127.0.0.1:8000",
    "crm.example.com",
    ":443",
    "[::1]",
    "javascript:",
    "file:",
    " ",
    "\t",
    "\x00",
]
any_json = json_like()
templates = st.lists(
    st.one_of(st.sampled_from(TEMPLATE_PIECES), st.text(max_size=4)), max_size=7
).map("".join)


@st.composite
def manifests(draw: st.DrawFn) -> Any:
    """Near-valid manifests (right spec and issuer, everything else arbitrary), or anything."""
    document: dict[str, Any] = {"spec": "talkie/1", "issuer": ORIGIN, "serverId": "s"}
    document["name"] = draw(nasty_text)
    for key in draw(st.lists(st.sampled_from(TOP_KEYS), unique=True, max_size=3)):
        document[key] = draw(any_json)
    if draw(st.booleans()):
        names = st.sampled_from(["run", "status", "thread", "voiceSessions", "x"])
        document["endpoints"] = draw(st.dictionaries(names, templates, max_size=4))
    return document if draw(st.integers(0, 3)) else draw(any_json)


@fuzz_settings(120)
@given(data=manifests())
def test_any_json_is_a_manifest_or_a_discovery_error(data: Any) -> None:
    """§1: validation never fails otherwise; an accepted manifest is for its own origin."""
    try:
        manifest, warnings = validate_manifest(data, ORIGIN)
    except DiscoveryError as error:
        assert unsafe(error.message) == []
        return
    assert manifest.issuer == ORIGIN
    assert manifest.spec.startswith("talkie/1")
    assert unsafe(manifest.name, manifest.description, *warnings) == []
    assert all(isinstance(v, str) for v in manifest.endpoints.values())
    assert manifest.limits.max_message_chars > 0


def server_with(template: str) -> DiscoveredServer:
    """A discovered server whose `run` endpoint is `template`."""
    manifest, _ = validate_manifest(
        {"spec": "talkie/1", "issuer": ORIGIN, "serverId": "s", "name": "n"}, ORIGIN
    )
    manifest = manifest.model_copy(update={"endpoints": {"run": template}})
    foreign = _foreign_endpoints(ORIGIN, manifest.endpoints)
    return DiscoveredServer(manifest, ORIGIN + "/m", ORIGIN, 0.0, 3600.0, foreign)


def run_url(server: DiscoveredServer) -> str | None:
    """The `run` URL, or None when it is refused (a URL that cannot be parsed counts too:
    test_an_unparsable_endpoint_is_a_discovery_error holds that part)."""
    try:
        return server.endpoint("run", threadId="t", x="y")
    except (DiscoveryError, httpx.InvalidURL):
        return None


@fuzz_settings(300)
@given(template=templates)
@example(template="//127.0.0.2/run")
@example(template="http://127.0.0.1:8000@127.0.0.2/run")
@example(template="https://crm.example.com:443/api")
def test_an_endpoint_is_never_on_an_unaccepted_origin(template: str) -> None:
    """§1: an endpoint URL is same-origin or refused until accepted; the list agrees."""
    server = server_with(template)
    url = run_url(server)
    if url is not None:
        assert origin_of(url) == ORIGIN
        assert "run" not in server.foreign_endpoints
    elif "run" in server.foreign_endpoints:
        server.accepted_origins.add(server.foreign_endpoints["run"])
        accepted = run_url(server)
        if accepted is not None:
            assert origin_of(accepted) in (ORIGIN, server.foreign_endpoints["run"])


@fuzz_settings(100)
@given(template=templates)
@example(template="http://[::1")
def test_an_unparsable_endpoint_is_a_discovery_error(template: str) -> None:
    """§1: an endpoint template that is not a URL is refused with a DiscoveryError."""
    with contextlib.suppress(DiscoveryError):
        server_with(template).endpoint("run", threadId="t", x="y")


@fuzz_settings(300)
@given(value=st.one_of(nasty_text, st.sampled_from([".", "..", "/", "a/../../b", "%2F", "?x#y"])))
def test_a_placeholder_value_stays_one_path_segment(value: str) -> None:
    """§1: `{name}` is a URL-encoded path segment: no value can change the path around it."""
    url = httpx.URL(resolve_endpoint(ORIGIN, "/api/threads/{threadId}/x", {"threadId": value}))
    assert origin_of(url) == ORIGIN
    segments = url.raw_path.split(b"?")[0].split(b"/")
    assert segments[:3] == [b"", b"api", b"threads"] and segments[4:] == [b"x"]
    assert url.query == b"" and url.fragment == ""
