"""What a person takes out of a thread: links into the browser (§6, §7), files into the
downloads folder, answers and code onto the clipboard, the thread as a Markdown file.

The chat screen routes its keys (Ctrl+G, Ctrl+T, Ctrl+S) and the widgets' `OpenLinkRequested`
and `DownloadRequested` here. A link opens only when `check_link` allows it; a file is fetched
with the token only from the server's own origin, any other file opens in the browser instead.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import httpx

from talkie_tui.chat.export import conversation_markdown
from talkie_tui.chat.turns import LinkPart
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _
from talkie_tui.ui.chat.host import ChatHost
from talkie_tui.ui.messages import OpenLinkRequested
from talkie_tui.ui.screens.picker import PickerScreen, PickItem
from talkie_tui.ui.support.links import check_link, open_in_browser
from talkie_tui.ui.support.markdown import code_blocks, render_markdown

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Backend
    from talkie_tui.chat.vocabulary import FileBlock

__all__ = ["TakeawayHost", "Takeaways", "free_path"]


class TakeawayHost(ChatHost, Protocol):
    """What taking things out of a thread needs of the screen; `ChatScreen` is one: the
    header shows a download's progress, the app's clipboard takes copies."""


class Takeaways:
    """Links, files, copies and exports of the thread on one chat screen."""

    def __init__(self, host: TakeawayHost, backend: Backend, downloads_dir: Path) -> None:
        self._host = host
        self._backend = backend
        self._downloads_dir = downloads_dir

    def open_link(self, url: str) -> None:
        """Open a link a person chose, if it is allowed; without a browser, copy it."""
        target = check_link(url, self._backend.info.origin)
        if not target.allowed:
            self._host.notify(
                _("Not opened ({reason}): {url}").format(reason=target.reason, url=target.url),
                severity="warning",
                markup=False,
            )
            return
        if not open_in_browser(target):
            self._host.app.copy_to_clipboard(target.url)
            self._host.notify(
                _("No browser here; the link was copied: {url}").format(url=target.url),
                markup=False,
            )

    def download(self, block: FileBlock) -> Worker[None]:
        """Download a same-origin file with the token; other files open in the browser."""
        return self._host.run_worker(
            partial(self._download, block),
            name="download",
            group="downloads",
            exit_on_error=False,
        )

    async def _download(self, block: FileBlock) -> None:
        host = self._host
        if not self._backend.is_same_origin(block.url):
            host.post_message(OpenLinkRequested(block.url, block.name))
            return
        folder = self._downloads_dir
        target = free_path(folder, block.name)
        received = 0
        try:
            folder.mkdir(parents=True, exist_ok=True)
            async with self._backend.download(block.url) as response:
                total = int(response.headers.get("content-length") or block.size or 0)
                with target.open("wb") as file:
                    async for chunk in response.aiter_bytes():
                        file.write(chunk)
                        received += len(chunk)
                        if total:
                            percent = received * 100 // total
                            host.header.set_activity(f"⇣ {block.name} {percent}%")
        except (TalkieError, OSError, httpx.HTTPError) as error:
            # A connection lost mid-file is an httpx error: no half file is left behind.
            target.unlink(missing_ok=True)
            if isinstance(error, TalkieError):
                host.sign_in_needed(error)
            message = error.message if isinstance(error, TalkieError) else str(error) or _("failed")
            host.notify(
                _("{name} was not downloaded: {error}").format(name=block.name, error=message),
                severity="error",
                markup=False,
            )
            return
        finally:
            host.header.set_activity("")
        host.notify(_("Saved {path}").format(path=target), markup=False)

    def copy_answer(self) -> None:
        """Copy the last answer's text to the clipboard (OSC 52)."""
        for turn in reversed(self._host.session.conversation.turns):
            if turn.role == "assistant" and turn.text:
                self._host.app.copy_to_clipboard(turn.text)
                self._host.notify(_("The last answer was copied."), markup=False)
                return
        self._host.notify(_("There is no answer to copy yet."), markup=False)

    def pick(self) -> None:
        """Choose a link to open, or a code block or an answer to copy (newest first)."""
        items: list[PickItem] = []
        for turn in reversed(self._host.session.conversation.turns):
            if turn.role != "assistant":
                continue
            text = turn.text
            items += [
                PickItem("link", link.label or link.url, link.url)
                for link in render_markdown(text).links
            ]
            items += [
                PickItem("link", p.link.label or p.link.url, p.link.url)
                for p in turn.parts
                if isinstance(p, LinkPart)
            ]
            items += [PickItem("code", code, code) for code in code_blocks(text)]
            if text:
                items.append(PickItem("answer", text, text))
        if not items:
            self._host.notify(_("There is nothing to open or copy yet."), markup=False)
            return
        self._host.app.push_screen(PickerScreen(items), self._picked)

    def _picked(self, item: PickItem | None) -> None:
        if item is None:
            return
        if item.kind == "link":
            self._host.post_message(OpenLinkRequested(item.value, item.label))
        else:
            self._host.app.copy_to_clipboard(item.value)
            self._host.notify(
                _("Copied the code block.") if item.kind == "code" else _("Copied the answer."),
                markup=False,
            )

    def export(self) -> None:
        """Save the thread as a Markdown file in the downloads folder."""
        conversation = self._host.session.conversation
        if not conversation.turns:
            self._host.notify(_("The thread is empty."), markup=False)
            return
        title = conversation.turns[0].text[:40] or "thread"
        stamp = datetime.now().strftime("%Y-%m-%d-%H%M")
        target = free_path(self._downloads_dir, f"talkie-{_slug(title)}-{stamp}.md")
        try:
            self._downloads_dir.mkdir(parents=True, exist_ok=True)
            target.write_text(
                conversation_markdown(conversation, self._backend.info.name),
                encoding="utf-8",
            )
        except OSError as error:
            self._host.notify(
                _("Not exported: {error}").format(error=error), severity="error", markup=False
            )
            return
        self._host.notify(_("Exported to {path}").format(path=target), markup=False)


def _slug(text: str) -> str:
    return re.sub(r"[^\w-]+", "-", text, flags=re.UNICODE).strip("-").lower() or "thread"


def free_path(folder: Path, name: str) -> Path:
    """`folder/name`, or `name (2)` etc. when taken; the name is reduced to a safe file name."""
    safe = Path(name.replace("\\", "/")).name.strip(". ") or "download"
    stem, suffix = Path(safe).stem, Path(safe).suffix
    candidate = folder / safe
    number = 2
    while candidate.exists():
        candidate = folder / f"{stem} ({number}){suffix}"
        number += 1
    return candidate
