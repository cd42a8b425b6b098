"""Export SVG and PNG screenshots of the main screens from the demo server (`make screenshots`).

The app runs headless against the real reference server with its demo agent; PNGs are made
from the SVGs with rsvg-convert (Debian: librsvg2-bin), with a local monospace font.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from talkie_tui.commands.demo_cuckoo import CuckooDemo
    from talkie_tui.ui.app import TalkieApp
    from talkie_tui.ui.chat.screen import ChatScreen

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "screenshots"
SIZE = (120, 40)
TOKEN = "screenshot-token"


def to_png(svg: Path) -> Path | None:
    """Render an SVG screenshot to PNG; None when rsvg-convert is missing."""
    if shutil.which("rsvg-convert") is None:
        return None
    text = svg.read_text(encoding="utf-8")
    # Textual's SVG names Fira Code, which a headless machine lacks; spaces must be kept.
    text = text.replace("Fira Code", "DejaVu Sans Mono")
    text = re.sub(r"<svg ", '<svg xml:space="preserve" ', text, count=1)
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False) as prepared:
        prepared.write(text)
    png = svg.with_suffix(".png")
    subprocess.run(["rsvg-convert", prepared.name, "-o", str(png)], check=True)
    os.unlink(prepared.name)
    return png


async def capture(url: str) -> list[Path]:
    """Drive the app through the main screens and save each as SVG."""
    from talkie_tui.config import KnownServers, Settings
    from talkie_tui.ui.app import TalkieApp
    from talkie_tui.ui.chat.screen import ChatScreen
    from talkie_tui.ui.widgets.action_card import ActionCard

    saved: list[Path] = []

    def save(app: TalkieApp, name: str) -> None:
        path = OUT / f"{name}.svg"
        app.save_screenshot(filename=path.name, path=str(OUT))
        saved.append(path)

    async def settle(pilot, screen: ChatScreen) -> None:  # type: ignore[no-untyped-def]
        for _ in range(500):
            if not screen.answering:
                break
            await pilot.pause(0.02)
        await pilot.app.workers.wait_for_complete()
        for card in screen.transcript.query(ActionCard):
            while card.is_guarded:
                await pilot.pause(0.05)
        await pilot.pause(0.3)

    app = TalkieApp(url, token=TOKEN, settings=Settings(), known=KnownServers.load())
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):
            screen = app.screen
            if isinstance(screen, ChatScreen) and screen.is_mounted and screen.query("#header"):
                if screen.header.state == "connected":
                    break
                continue
            await pilot.pause(0.02)
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        for message in ("show Alfa", "send the offer to Alfa"):
            screen.composer.insert(message)
            await pilot.press("enter")
            await pilot.pause(0.2)
            await settle(pilot, screen)
        save(app, "chat")
        await pilot.press("f1")
        await pilot.pause(0.3)
        save(app, "help")
        await pilot.press("escape")
        await pilot.press("ctrl+n")
        screen.composer.insert("what meetings do I have today?")
        await pilot.press("enter")
        await pilot.pause(0.2)
        await settle(pilot, screen)
        save(app, "threads")

    connect = TalkieApp(None, settings=Settings(), known=KnownServers.load())
    async with connect.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        save(connect, "connect")
    return saved


async def capture_gateway(url: str) -> list[Path]:
    """A Minara gateway's session: a table, a chart and a confirmation the agent asks for."""
    from talkie_tui.config import KnownServers, Settings
    from talkie_tui.ui.app import TalkieApp
    from talkie_tui.ui.widgets.question import QuestionView

    app = TalkieApp(
        url,
        gateway_token=TOKEN,
        protocol="minara",
        settings=Settings(),
        known=KnownServers.load(),
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat_screen(pilot)
        screen.composer.insert("portfolio")
        await pilot.press("enter")
        for _ in range(500):
            await pilot.pause(0.02)
            if not screen.answering:
                break
        screen.composer.insert("swap 100 USDC to ETH")
        await pilot.press("enter")
        for _ in range(500):  # the turn waits for the answer: wait for the question instead
            await pilot.pause(0.02)
            if screen.transcript.query(QuestionView):
                break
        await pilot.pause(1.0)  # the question's input guard, then a steady frame
        path = OUT / "minara.svg"
        app.save_screenshot(filename=path.name, path=str(OUT))
    return [path]


async def capture_hub(demo: CuckooDemo) -> list[Path]:
    """A hub's chat through the bridge: the client's card, then the offer with its buttons."""
    from talkie_tui.config import KnownServers, Settings
    from talkie_tui.ui.app import TalkieApp
    from talkie_tui.ui.widgets.buttons import ButtonsView

    app = TalkieApp(
        demo.hub_url,
        hub_token=demo.session_token,
        protocol="cuckoo",
        settings=Settings(),
        known=KnownServers.load(),
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = await chat_screen(pilot)
        for message, done in (
            ("show me Alfa", lambda: "is a client from Brno" in _text(app)),
            ("send the offer to Alfa", lambda: bool(screen.transcript.query(ButtonsView))),
        ):
            screen.composer.insert(message)
            await pilot.press("enter")
            for _ in range(1000):
                await pilot.pause(0.02)
                if done() and not screen.answering:
                    break
        await pilot.pause(1.0)  # the buttons' input guard, then a steady frame
        path = OUT / "cuckoo.svg"
        app.save_screenshot(filename=path.name, path=str(OUT))
    return [path]


async def chat_screen(pilot: Pilot[None]) -> ChatScreen:
    """The chat screen, once it has composed (its header is there)."""
    from talkie_tui.ui.chat.screen import ChatScreen

    for _ in range(500):
        screen = pilot.app.screen
        if isinstance(screen, ChatScreen) and screen.is_mounted and screen.query("#header"):
            return screen
        await pilot.pause(0.02)
    raise RuntimeError("the chat screen did not open")


def _text(app: TalkieApp) -> str:
    """What the screen shows, as plain text."""
    return html.unescape(re.sub(r"<[^>]+>", "", app.export_screenshot().replace("&#160;", " ")))


def main() -> int:
    from talkie_tui.commands.demo_cuckoo import cuckoo_demo
    from talkie_tui.devserver.minara.config import GatewayConfig
    from talkie_tui.devserver.minara.runner import serve_in_thread as serve_gateway
    from talkie_tui.devserver.talkie.config import ServerConfig
    from talkie_tui.devserver.talkie.runner import serve_in_thread

    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        os.environ["TALKIE_HOME"] = folder  # keep the user's known servers untouched
        config = ServerConfig(
            test_mode=True, dev_token=TOKEN, db_path=Path(folder) / "demo.db", demo_delay=0.0
        )
        with serve_in_thread(config) as url:
            svgs = asyncio.run(capture(url))
        gateway = GatewayConfig(auth_token=TOKEN, db_path=Path(folder) / "gw.db", demo_delay=0.0)
        with serve_gateway(gateway) as url:
            svgs += asyncio.run(capture_gateway(url))
        with cuckoo_demo(Path(folder) / "hub") as demo:
            svgs += asyncio.run(capture_hub(demo))
    for svg in svgs:
        png = to_png(svg)
        print(f"{svg.relative_to(ROOT)}" + (f"  {png.relative_to(ROOT)}" if png else ""))
    if shutil.which("rsvg-convert") is None:
        print("rsvg-convert is missing (apt-get install librsvg2-bin): SVG only.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
