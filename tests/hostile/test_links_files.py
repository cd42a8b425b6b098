"""Card and link URLs (§6, §7, talkie.open) that point where they must not, and file blocks
on other origins, in the TUI.

A URL opens only on a gesture and only when it is `https:` or same-origin (ui/links.py
check_link); `javascript:`, `data:`, `file:` and plain-http other origins never open. A file is
downloaded with the bearer only from the issuer origin; nothing reaches the other origin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from talkie_tui.ui.chat import takeaways as takeaways_module
from talkie_tui.ui.messages import OpenLinkRequested
from talkie_tui.ui.support.links import LinkTarget, check_link
from talkie_tui.ui.support.markdown import render_markdown
from talkie_tui.ui.widgets.card import CardView, FileRow
from talkie_tui.ui.widgets.link import LinkRow, LinkView
from tests.helpers import TEST_TOKEN
from tests.hostile.kit import answer, bearers, custom, frames, hostile_app, says, sink_app
from tests.protocol.conftest import Serve
from tests.stub_server import ANOTHER_LOOPBACK, StubServer, manifest_document
from tests.ui.flows import chat_screen, make_app, until

pytestmark = pytest.mark.hostile

NEVER = [
    "javascript:alert(document.cookie)",
    " JavaScript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "file:///etc/passwd",
    "vbscript:msgbox(1)",
    "ftp://example.org/x",
]


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs handed to the system browser (a graphical one is pretended to exist)."""
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, new=0: opened.append(url) or True)
    monkeypatch.setattr("talkie_tui.browser.graphical_browser_available", lambda: True)
    return opened


def link_card(elsewhere: StubServer) -> dict[str, Any]:
    """A card whose title, links and list items point everywhere."""
    other = elsewhere.origin
    urls = [*NEVER, f"{other}/plain-http", f"//{ANOTHER_LOOPBACK}:{elsewhere.port}/relative"]
    return {
        "title": "Links",
        "url": "javascript:alert('title')",
        "blocks": [
            *({"type": "link", "label": f"link {i}", "url": url} for i, url in enumerate(urls)),
            {"type": "link", "label": "fine https", "url": "https://example.org/ok"},
            {"type": "link", "label": "fine here", "url": "/here"},
            {"type": "list", "items": [{"title": "item", "url": "file:///etc/shadow"}]},
        ],
        "fallbackText": "links",
    }


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[LinkTarget]:
    """Every link decision the chat screen made (ui/links.py check_link)."""
    decisions: list[LinkTarget] = []

    def spy(url: str, origin: str) -> LinkTarget:
        decisions.append(check_link(url, origin))
        return decisions[-1]

    monkeypatch.setattr(takeaways_module, "check_link", spy)
    return decisions


async def activate(pilot: Any, rows: list[Any]) -> None:
    """A gesture on each row (Enter on the first, the same activation for the rest)."""
    rows[0].focus()
    await pilot.press("enter")
    for row in rows[1:]:
        row.activate()
    await pilot.pause()


async def test_links_open_only_https_or_same_origin(
    serve: Serve, tmp_path: Path, browser: list[str], checked: list[LinkTarget]
) -> None:
    """§6/§7: every card, list, link, talkie.open and Markdown URL goes through the policy."""
    elsewhere = serve(sink_app(), host=ANOTHER_LOOPBACK)
    run = frames(
        answer(
            *says("[img](data:image/png;base64,iVBORw0KGgo=) and [md](https://example.org/md)"),
            custom("talkie.card", link_card(elsewhere)),
            custom("talkie.open", {"url": "data:text/html,<script>x</script>", "label": "open"}),
            custom("talkie.open", {"url": "file:///home", "label": "home"}),
        )
    )
    # The brand logo is a plain-http URL on the other origin: it is never fetched (§1 brand).
    logo = elsewhere.url("/logo.png")
    server = serve(hostile_app(run, manifest=lambda o: manifest_document(o, brand={"logo": logo})))
    app = make_app(server.origin, tmp_path)
    async with app.run_test(size=(120, 80), notifications=True) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.insert("links")
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.transcript.query(CardView)) and not screen.answering)
        await pilot.pause()
        rows = list(screen.transcript.query(LinkRow))
        # NEVER, two other-origin links, two fine ones, the list item, the title, two opens.
        assert len(rows) == len(NEVER) + 2 + 2 + 1 + 1 + 2
        assert len(screen.transcript.query(LinkView)) == 2
        await activate(pilot, rows)
        # Markdown links (data:image is a link to markdown-it) ask just like a click does.
        for link in render_markdown(screen.session.conversation.turns[-1].text).links:
            screen.post_message(OpenLinkRequested(link.url, link.label))
        await pilot.pause()
        assert sorted(browser) == sorted(
            [f"{server.origin}/here", "https://example.org/ok", "https://example.org/md"]
        )
        refused = [target.url for target in checked if not target.allowed]
        assert len(refused) == len(rows) - 2 + 1  # and the data:image Markdown link
        assert not any(url.startswith("https:") for url in refused)
    assert elsewhere.requests == []


def file_card(server_port: int, elsewhere: StubServer) -> dict[str, Any]:
    """File blocks: other origins (plain, https, disguised) and same-origin tricks."""
    other = elsewhere.origin
    files = {
        "plain-other.pdf": f"{other}/files/a.pdf",
        "https-other.pdf": f"https://{ANOTHER_LOOPBACK}:{elsewhere.port}/files/b.pdf",
        "userinfo.pdf": f"http://127.0.0.1:{server_port}@{ANOTHER_LOOPBACK}:{elsewhere.port}/c",
        "scheme-relative.pdf": f"//{ANOTHER_LOOPBACK}:{elsewhere.port}/files/d.pdf",
        "bounce.pdf": "/files/bounce",
        "../escaped.sh": "/files/traversal",
    }
    blocks = [{"type": "file", "name": name, "url": url} for name, url in files.items()]
    return {"title": "Files", "blocks": blocks, "fallbackText": "files"}


async def test_files_and_logos_on_other_origins_never_get_the_token(
    serve: Serve, tmp_path: Path, browser: list[str]
) -> None:
    """§6/§2.1: only same-origin files/logo fetched (bearer); no redirect, no path escape."""
    elsewhere = serve(sink_app(), host=ANOTHER_LOOPBACK)
    port: list[int] = []

    async def bounce(request: Request) -> Response:
        return RedirectResponse(elsewhere.url("/files/stolen"), status_code=302)

    async def traversal(request: Request) -> Response:
        return Response(b"#!/bin/sh\necho hi\n", media_type="text/x-sh")

    async def run(request: Request) -> Response:
        from tests.stub_server import sse_response

        return sse_response(frames(answer(custom("talkie.card", file_card(port[0], elsewhere)))))

    routes = [
        Route("/files/bounce", bounce),
        Route("/files/traversal", traversal),
        Route("/logo", bounce),  # a same-origin logo that redirects elsewhere
    ]
    manifest = lambda origin: manifest_document(origin, brand={"logo": "/logo"})  # noqa: E731
    server = serve(hostile_app(run, routes=routes, manifest=manifest))
    port.append(server.port)
    app = make_app(server.origin, tmp_path)
    downloads = tmp_path / "downloads"
    async with app.run_test(size=(120, 60), notifications=True) as pilot:
        screen = await chat_screen(app, pilot)
        screen.composer.insert("files")
        await pilot.press("enter")
        await until(pilot, lambda: bool(screen.transcript.query(FileRow)) and not screen.answering)
        await activate(pilot, list(screen.transcript.query(FileRow)))
        await until(
            pilot,
            lambda: (
                not any(w.group in ("downloads", "logo") and w.is_running for w in screen.workers)
            ),
        )
        await pilot.pause()
        messages = [str(n.message) for n in app._notifications]
    # The https file on another origin may open in the browser (no token goes with it).
    assert browser == [f"https://{ANOTHER_LOOPBACK}:{elsewhere.port}/files/b.pdf"]
    assert any("bounce.pdf was not downloaded" in m for m in messages), messages
    assert sorted(p.name for p in downloads.iterdir()) == ["escaped.sh"]
    assert not (tmp_path / "escaped.sh").exists()
    assert elsewhere.requests == []
    assert "/logo" in server.paths()  # asked for, and its redirect not followed
    downloaded = [r for r in server.requests if r.path.startswith("/files/")]
    assert sorted(r.path for r in downloaded) == ["/files/bounce", "/files/traversal"]
    assert bearers(downloaded) == [f"Bearer {TEST_TOKEN}"] * 2
