"""Discovery (§1) against servers that break its rules: other origins, size, version, nesting.

Each case runs the whole client (`talkie ask`, or the TUI) and checks the other origin on
127.0.0.2 got nothing (or no token), and that the refusal says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.connect import ConnectScreen
from tests.helpers import TEST_TOKEN
from tests.hostile.kit import (
    answer,
    ask_cli,
    bearers,
    frames,
    hostile_app,
    says,
    sink_app,
)
from tests.protocol.conftest import Serve
from tests.stub_server import (
    ANOTHER_LOOPBACK,
    ENDPOINTS,
    Streamer,
    manifest_document,
    talkie_app,
)
from tests.ui.flows import chat_screen, make_app, until

pytestmark = pytest.mark.hostile


async def test_a_manifest_redirecting_to_another_origin_is_not_followed(serve: Serve) -> None:
    """§1 MUST NOT: a redirect of the manifest to another origin is refused, nothing sent."""
    elsewhere = serve(hostile_app(), host=ANOTHER_LOOPBACK)  # a valid server, another origin

    async def away(request: Request) -> Response:
        return RedirectResponse(elsewhere.url("/.well-known/talkie.json"), status_code=302)

    server = serve(talkie_app([Route("/.well-known/talkie.json", away)]))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "redirects to another site" in asked.err and elsewhere.origin in asked.err
    assert elsewhere.requests == []


async def test_a_manifest_claiming_another_origin_is_refused(serve: Serve) -> None:
    """§1 MUST: the manifest is served from its issuer's origin; no request goes elsewhere."""
    elsewhere = serve(sink_app(), host=ANOTHER_LOOPBACK)
    server = serve(hostile_app(manifest=lambda origin: manifest_document(elsewhere.origin)))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "refuses a manifest from another origin" in asked.err
    assert elsewhere.requests == []
    assert server.paths("POST") == []


def spellings(origin: str, port: int) -> list[str]:
    """Ways to write "the run endpoint is on `origin`" that a careless client may miss."""
    host = origin.split("://", 1)[1]
    return [
        f"{origin}/run",
        f"//{host}/run",  # scheme-relative
        f"http://127.0.0.1:{port}@{host}/run",  # userinfo that looks like the issuer
        f"HTTP://{host.upper()}/run",
    ]


@pytest.mark.parametrize("spelling", range(4))
async def test_endpoints_on_another_origin_are_not_used_without_acceptance(
    serve: Serve, spelling: int
) -> None:
    """§1: an endpoint on another origin is refused (no dialog in `ask`), nothing sent there."""
    elsewhere = serve(sink_app(), host=ANOTHER_LOOPBACK)
    port: list[int] = []

    def manifest(origin: str) -> dict[str, Any]:
        document = manifest_document(origin)
        document["endpoints"]["run"] = spellings(elsewhere.origin, port[0])[spelling]
        return document

    server = serve(hostile_app(manifest=manifest))
    port.append(server.port)
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "endpoint is on another site" in asked.err and "accept" in asked.err
    assert elsewhere.requests == []


async def test_accepted_endpoints_on_another_origin_never_get_the_token(
    serve: Serve, tmp_path: Path
) -> None:
    """§1/§2.1: after the person accepts another origin, it is used, but without the bearer."""
    elsewhere = serve(hostile_app(frames(answer(*says("from elsewhere")))), host=ANOTHER_LOOPBACK)

    def manifest(origin: str) -> dict[str, Any]:
        document = manifest_document(origin, serverId="split.test")
        for name in ("run", "status"):
            document["endpoints"][name] = elsewhere.url(ENDPOINTS[name])
        return document

    server = serve(hostile_app(manifest=manifest))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert elsewhere.origin in dialog.body_text and "run" in dialog.body_text
        assert elsewhere.requests == []  # nothing before the answer
        dialog.dismiss(True)
        screen = await chat_screen(app, pilot)
        screen.composer.insert("hello")
        await pilot.press("enter")
        await until(pilot, lambda: screen.session.conversation.turns[-1].text == "from elsewhere")
    assert sorted(elsewhere.paths()) == [ENDPOINTS["run"], ENDPOINTS["status"]]
    assert bearers(elsewhere.requests) == []
    assert f"Bearer {TEST_TOKEN}" in bearers(server.requests)  # the issuer still gets it


async def test_refused_endpoints_on_another_origin_get_nothing(
    serve: Serve, tmp_path: Path
) -> None:
    """§1: when the person refuses, nothing is sent to the other origin and the TUI says so."""
    elsewhere = serve(sink_app(), host=ANOTHER_LOOPBACK)

    def manifest(origin: str) -> dict[str, Any]:
        document = manifest_document(origin, name="Split")
        document["endpoints"]["run"] = elsewhere.url("/run")
        return document

    server = serve(hostile_app(manifest=manifest))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")  # the focused button is Refuse
        await until(pilot, lambda: isinstance(app.screen, ConnectScreen))
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        await until(pilot, lambda: "Not connected" in screen.status_text)
        assert elsewhere.origin in screen.status_text
    assert elsewhere.requests == []


async def test_a_huge_manifest_is_refused_without_reading_it(serve: Serve) -> None:
    """§1: a manifest over 64 kB (10 MB, no Content-Length) is refused early."""
    streamer = Streamer(pieces=[b'{"spec": "talkie/1", "pad": "'], repeat=b"x" * 65536)
    streamer.limit = 10 * 1024 * 1024

    async def huge(request: Request) -> Response:
        return StreamingResponse(streamer.body(), media_type="application/json")

    server = serve(talkie_app([Route("/.well-known/talkie.json", huge)]), small_buffers=True)
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "larger than 64 kB" in asked.err
    assert streamer.wait_abandoned()
    assert streamer.sent < 4 * 1024 * 1024


async def test_a_talkie_2_server_is_refused_and_the_address_stays(
    serve: Serve, tmp_path: Path
) -> None:
    """§1 MUST: another major version is refused with a clear message; the address is kept."""
    server = serve(
        hostile_app(frames(answer()), manifest=lambda o: manifest_document(o, spec="talkie/2"))
    )
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "speaks 'talkie/2'" in asked.err and "talkie/1" in asked.err
    assert server.paths("POST") == []
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ConnectScreen)
        await until(pilot, lambda: "talkie/2" in screen.status_text)
        assert screen.address_input.value == server.origin
    assert server.paths("POST") == []


def nested(depth: int) -> str:
    """A JSON value `depth` arrays deep (small: 2 bytes a level)."""
    return "[" * depth + "]" * depth


async def test_a_deeply_nested_manifest_is_refused_cleanly(serve: Serve) -> None:
    """§1: a manifest nested 10,000 levels deep (20 kB) is refused with words, no crash."""

    async def deep(request: Request) -> Response:
        body = '{"spec": "talkie/1", "pad": ' + nested(10_000) + "}"
        return Response(body, media_type="application/json")

    server = serve(talkie_app([Route("/.well-known/talkie.json", deep)]))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "manifest" in asked.err


@pytest.mark.parametrize("template", ["http://[::1", "http://127.0.0.1:1:2/run"])
async def test_an_endpoint_that_is_not_a_url_is_refused_with_words(
    serve: Serve, template: str
) -> None:
    """§1: an endpoint template that cannot be parsed is a clear refusal, not a crash."""

    def manifest(origin: str) -> dict[str, Any]:
        document = manifest_document(origin)
        document["endpoints"]["run"] = template
        return document

    server = serve(hostile_app(manifest=manifest))
    asked = await ask_cli(server.origin, "hello")
    assert asked.code == 1
    assert "run" in asked.err
