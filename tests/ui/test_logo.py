"""The brand logo: careful fetching over real loopback HTTP, and half-block drawing."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from PIL import Image
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from talkie_tui.core.logo import MAX_LOGO_BYTES, is_logo_image
from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.protocol.talkie.logo import fetch_logo
from talkie_tui.ui.support.logo_drawing import HALF_BLOCK, render_half_blocks
from talkie_tui.ui.widgets.logo import LogoView
from tests.helpers import TEST_TOKEN
from tests.stub_server import ANOTHER_LOOPBACK, Streamer, StubServer, manifest_document, talkie_app
from tests.ui.apps.cards_app import HarnessApp

RED, BLUE, WHITE = (255, 0, 0), (0, 0, 255), (255, 255, 255)


def image_bytes(
    image_format: str, size: tuple[int, int] = (4, 4), mode: str = "RGB", **kwargs: Any
) -> bytes:
    """An image whose top half is red and bottom half blue, encoded as `image_format`."""
    width, height = size
    image = Image.new(mode, size, (*BLUE, 255) if mode == "RGBA" else BLUE)
    image.paste((*RED, 255) if mode == "RGBA" else RED, (0, 0, width, height // 2))
    out = io.BytesIO()
    image.save(out, format=image_format, **kwargs)
    return out.getvalue()


PNG = image_bytes("PNG")
JPEG = image_bytes("JPEG", size=(16, 16), quality=95)
GIF = image_bytes("GIF")
BIG = PNG + b"\0" * (300 * 1024)  # starts like a PNG; 300 kB in all


# --- a server with logos -------------------------------------------------------------------


class LogoServer:
    """A talkie/1 stub whose `brand.logo` a test sets; it serves a few kinds of logo."""

    def __init__(self) -> None:
        self.logo: str | None = None
        self.chunked = Streamer(
            pieces=[BIG[i : i + 32 * 1024] for i in range(0, len(BIG), 32 * 1024)]
        )
        self.chunked.delay = 0.02
        self.declared = Streamer(pieces=[BIG[:1024]], repeat=b"\0" * 1024, limit=len(BIG))
        self.declared.delay = 0.02

        def serve(body: bytes, media_type: str) -> Any:
            async def endpoint(request: Request) -> Response:
                return Response(body, media_type=media_type)

            return endpoint

        async def big_declared(request: Request) -> Response:
            headers = {"content-length": str(len(BIG))}
            return StreamingResponse(self.declared.body(), media_type="image/png", headers=headers)

        async def big_chunked(request: Request) -> Response:
            return StreamingResponse(self.chunked.body(), media_type="image/png")

        routes = [
            Route("/talkie/logo.png", serve(PNG, "image/png")),
            Route("/logo.jpg", serve(JPEG, "image/jpeg")),
            Route("/logo.gif", serve(GIF, "image/gif")),
            Route("/logo.html", serve(b"<html><body>logo</body></html>", "image/png")),
            Route("/big-declared.png", big_declared),
            Route("/big-chunked.png", big_chunked),
        ]
        self.server = StubServer(talkie_app(routes, manifest=self.manifest)).start()

    def manifest(self, origin: str) -> dict[str, Any]:
        """The manifest with the current logo."""
        return manifest_document(origin, brand={"logo": self.logo} if self.logo else {})


@pytest.fixture(scope="module")
def logo_server() -> Iterator[LogoServer]:
    """One logo server for the module."""
    server = LogoServer()
    yield server
    server.server.stop()


@pytest.fixture
def other_origin() -> Iterator[StubServer]:
    """A server on another loopback address (another origin), over plain http."""
    app = talkie_app([Route("/logo.png", lambda request: Response(PNG, media_type="image/png"))])
    server = StubServer(app, host=ANOTHER_LOOPBACK).start()
    yield server
    server.stop()


@pytest.fixture
async def client_for(logo_server: LogoServer) -> AsyncIterator[Any]:
    """Factory: a connected client of the logo server whose manifest names `logo`."""
    clients: list[TalkieClient] = []

    async def connect(logo: str | None) -> TalkieClient:
        logo_server.logo = logo
        client = await TalkieClient.connect(
            logo_server.server.origin, tokens=StaticToken(TEST_TOKEN)
        )
        clients.append(client)
        return client

    yield connect
    for client in clients:
        await client.aclose()


# --- fetching ------------------------------------------------------------------------------


async def test_a_same_origin_png_is_fetched_with_the_token(
    client_for: Any, logo_server: LogoServer
) -> None:
    client = await client_for("/talkie/logo.png")
    assert await fetch_logo(client) == PNG
    request = [r for r in logo_server.server.requests if r.path == "/talkie/logo.png"][-1]
    assert request.headers["authorization"] == f"Bearer {TEST_TOKEN}"


async def test_an_absolute_same_origin_jpeg_is_fetched(
    client_for: Any, logo_server: LogoServer
) -> None:
    client = await client_for(logo_server.server.url("/logo.jpg"))
    assert await fetch_logo(client) == JPEG


@pytest.mark.parametrize("path", ["/logo.gif", "/logo.html", "/missing.png"])
async def test_other_bodies_are_refused(client_for: Any, path: str) -> None:
    client = await client_for(path)
    assert await fetch_logo(client) is None


async def test_no_logo_no_request(client_for: Any, logo_server: LogoServer) -> None:
    client = await client_for(None)
    before = len(logo_server.server.requests)
    assert await fetch_logo(client) is None
    assert len(logo_server.server.requests) == before


async def test_a_declared_300_kb_logo_is_refused_before_reading(
    client_for: Any, logo_server: LogoServer
) -> None:
    client = await client_for("/big-declared.png")
    assert await fetch_logo(client) is None
    assert logo_server.declared.wait_abandoned()
    assert logo_server.declared.sent < len(BIG) // 2


async def test_an_undeclared_300_kb_logo_is_not_read_whole(
    client_for: Any, logo_server: LogoServer
) -> None:
    client = await client_for("/big-chunked.png")
    assert await fetch_logo(client) is None
    assert logo_server.chunked.wait_abandoned()
    assert not logo_server.chunked.finished


async def test_an_http_logo_on_another_origin_is_refused(
    client_for: Any, other_origin: StubServer
) -> None:
    client = await client_for(other_origin.url("/logo.png"))
    assert await fetch_logo(client) is None
    assert other_origin.requests == []  # not even asked


@pytest.mark.parametrize(
    "logo", ["https://127.0.0.1:1/logo.png", "data:image/png;base64,AAAA", " "]
)
async def test_failures_return_none_and_never_raise(client_for: Any, logo: str) -> None:
    # An https logo elsewhere is allowed, but here nothing listens: still only None.
    client = await client_for(logo)
    assert await fetch_logo(client) is None


def test_magic_bytes() -> None:
    assert is_logo_image(PNG)
    assert is_logo_image(JPEG)
    assert not is_logo_image(GIF)
    assert not is_logo_image(b"<html>")
    assert MAX_LOGO_BYTES == 256 * 1024


# --- drawing -------------------------------------------------------------------------------


def cell_colours(text: Any, line: int, column: int) -> tuple[Any, Any]:
    """(foreground, background) triplets of one cell of a half-block Text."""
    offset = sum(len(row) + 1 for row in text.plain.split("\n")[:line]) + column
    style = text.get_style_at_offset(_console(), offset)
    return style.color.get_truecolor(), style.bgcolor.get_truecolor()


def _console() -> Any:
    from rich.console import Console

    return Console(color_system="truecolor")


def test_top_pixel_is_foreground_bottom_pixel_is_background() -> None:
    # 2x2 pixels, red row over blue row, fit 2 cells x 1 row exactly.
    text = render_half_blocks(image_bytes("PNG", size=(2, 2)), width=2, height=1)
    assert text is not None
    assert text.plain == HALF_BLOCK * 2
    for column in (0, 1):
        top, bottom = cell_colours(text, 0, column)
        assert (top.red, top.green, top.blue) == RED
        assert (bottom.red, bottom.green, bottom.blue) == BLUE


def test_scales_to_fit_keeping_the_aspect_ratio() -> None:
    wide = image_bytes("PNG", size=(40, 10))
    text = render_half_blocks(wide, width=20, height=20)
    assert text is not None
    rows = text.plain.split("\n")
    assert len(rows) == 3  # 20 x 5 pixels: 3 rows, the last half filled with background
    assert {len(row) for row in rows} == {20}


def test_alpha_is_composited_onto_the_background() -> None:
    clear = Image.new("RGBA", (2, 2), (255, 0, 0, 0))
    out = io.BytesIO()
    clear.save(out, format="PNG")
    text = render_half_blocks(out.getvalue(), 2, 1, background=WHITE)
    assert text is not None
    top, bottom = cell_colours(text, 0, 0)
    assert (top.red, top.green, top.blue) == WHITE
    assert (bottom.red, bottom.green, bottom.blue) == WHITE


def test_a_jpeg_is_drawn() -> None:
    text = render_half_blocks(JPEG, 8, 4)
    assert text is not None
    top, _ = cell_colours(text, 0, 0)
    assert top.red > 200 and top.blue < 60


@pytest.mark.parametrize(
    "data",
    [
        GIF,
        b"\x89PNG\r\n\x1a\n" + b"garbage" * 20,
        image_bytes("PNG", size=(5000, 1)),  # over 4096 pixels wide, tiny as a file
        b"",
    ],
)
def test_bad_images_give_none(data: bytes) -> None:
    assert render_half_blocks(data, 10, 10) is None


def test_no_room_gives_none() -> None:
    assert render_half_blocks(PNG, 0, 5) is None
    assert render_half_blocks(PNG, 5, 0) is None


async def test_logo_view_draws_to_its_size_and_nothing_for_none() -> None:
    app = HarnessApp(lambda: [LogoView(PNG, id="logo"), LogoView(None, id="none")])
    async with app.run_test(size=(40, 12)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        logo = app.query_one("#logo", LogoView)
        rendered = logo.render()
        assert HALF_BLOCK in rendered.plain
        width, height = logo.content_size
        rows = rendered.plain.split("\n")
        assert len(rows) <= height
        assert max(len(row) for row in rows) <= width
        assert app.query_one("#none", LogoView).render().plain == ""
        await pilot.resize_terminal(20, 12)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert max(len(row) for row in logo.render().plain.split("\n")) <= logo.content_size.width
        logo.set_data(None)
        assert logo.render().plain == ""
