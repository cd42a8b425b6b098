"""The files of the next message on the chat screen: checked, uploaded, removed, sent.

A file is checked before any byte leaves (`chat.attachments.check_file`: it exists, its kind,
the limits of one message), then uploaded at once in a worker (`Attaches.upload`), its progress
drawn in the tray above the composer. The person may remove it at any time (an upload in
flight is cancelled). When a message is sent, the uploaded files leave the tray with it
(`take`); a send that failed gives them back (`give_back`), one that reached the server drops
them (`sent`). Where the server takes no files (`capabilities.attachments`), nothing here runs.

`/attach PATH` typed in the composer and a pasted path of an existing file come here too: the
screen recognises the command (`attach_command`), the composer the path (`Composer.PathPasted`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from talkie_tui.chat.attachments import AttachmentRefused, CheckedFile, check_file
from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.chat.vocabulary import FileBlock
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _, ngettext
from talkie_tui.ui.chat.host import ChatHost, ScreenHost
from talkie_tui.ui.messages import DownloadRequested
from talkie_tui.ui.screens.attach_prompt import AttachPromptScreen
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.widgets.attachment_tray import AttachmentTray, Pending
from talkie_tui.ui.widgets.pasted_paths import unquote_path

if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Attaches, Attachment, Backend

__all__ = [
    "ATTACH_COMMAND",
    "PendingAttachments",
    "attach_command",
    "attachment_file_block",
    "download_sent",
]

ATTACH_COMMAND = "/attach"


def attach_command(text: str) -> str | None:
    """The path of `/attach PATH` typed in the composer ("" when no path was given); None
    when the text is not that command (it is a message)."""
    stripped = text.strip()
    head, _sep, rest = stripped.partition(" ")
    if head != ATTACH_COMMAND or "\n" in stripped:
        return None
    return unquote_path(rest.strip())


def attachment_file_block(part: AttachmentPart, resolve: Callable[[str], str]) -> FileBlock | None:
    """A history attachment as a file to download (`DownloadRequested`), its URL made absolute
    against the server (`Backend.resolve_url`) so it goes with the token; None without a URL."""
    if not part.url:
        return None
    return FileBlock(
        name=part.filename, mime=part.media_type, size=part.size, url=resolve(part.url)
    )


def download_sent(host: ScreenHost, backend: Backend, part: AttachmentPart) -> None:
    """A file sent with a message, fetched with the token, from the server only."""
    block = attachment_file_block(part, backend.resolve_url)
    if block is None or not backend.is_same_origin(block.url):
        text = _("{name} is not downloaded: it is not on this server.")
        host.notify(text.format(name=part.filename), severity="warning", markup=False)
        return
    host.post_message(DownloadRequested(block))


class PendingAttachments:
    """The files the next message of one chat screen takes."""

    def __init__(
        self, host: ChatHost, backend: Backend, tray: Callable[[], AttachmentTray]
    ) -> None:
        self._host = host
        self._backend = backend
        self._tray = tray
        self.items: list[Pending] = []
        self._uploads: dict[int, Worker[None]] = {}

    @property
    def offered(self) -> bool:
        """True when the server takes files with a message."""
        return self._backend.info.capabilities.attachments

    @property
    def uploading(self) -> int:
        """How many files are still on their way up."""
        return sum(1 for item in self.items if item.state == "uploading")

    # --- adding and removing -------------------------------------------------------------

    def ask(self) -> None:
        """Ctrl+F: ask for a file to send with the next message."""

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.add(path)

        self._host.app.push_screen(AttachPromptScreen(), chosen)

    def offer(self, path: Path, text: str) -> None:
        """A pasted path of a file: offer to attach it, else it is typed in as pasted."""
        title = _("Attach {name} to the next message?").format(name=path.name)

        def answered(attach: bool | None) -> None:
            if attach:
                self.add(path)
            else:
                self._host.composer.insert(text)

        self._host.app.push_screen(
            ConfirmScreen(
                title, str(path), confirm_label=_("Attach"), cancel_label=_("Paste as text")
            ),
            answered,
        )

    def add(self, path: Path) -> bool:
        """Check `path` and start its upload; False (the reason shown) when it is refused."""
        if not self.offered:
            self._say(_("This server takes no files with a message."), "warning")
            return False
        try:
            checked = check_file(path, already=len(self.items))
        except AttachmentRefused as error:
            self._say(error.message, "warning")
            return False
        if any(item.file.path == checked.path for item in self.items):
            self._say(_("{name} is attached already.").format(name=checked.filename), "warning")
            return False
        item = Pending(checked, total=checked.size)
        self.items.append(item)
        self._tray().add(item)
        self._start_upload(item)
        return True

    def add_uploaded(self, attachment: Attachment) -> Pending:
        """A file the server already holds (a recorded voice note): ready in the tray."""
        checked = CheckedFile(
            Path(attachment.filename),
            attachment.filename,
            attachment.size,
            "office",  # a gateway's kind, never shown: the tray shows the server's (`describe`)
            attachment.media_type,
        )
        item = Pending(checked, state="ready", sent=attachment.size, total=attachment.size)
        item.attachment = attachment
        self.items.append(item)
        self._tray().add(item)
        return item

    def remove(self, item: Pending) -> None:
        """Take a file out of the next message (an upload in flight is stopped)."""
        if item not in self.items:
            return
        worker = self._uploads.pop(id(item), None)
        if worker is not None:
            worker.cancel()
        had_focus = item.row is not None and item.row.has_focus_within
        self.items.remove(item)
        self._tray().drop(item)
        if had_focus:
            self._host.composer.focus()

    def download(self, part: AttachmentPart) -> None:
        """Enter on a file sent with a message: fetch it (`download_sent`)."""
        download_sent(self._host, self._backend, part)

    # --- uploading -----------------------------------------------------------------------

    def _start_upload(self, item: Pending) -> None:
        self._uploads[id(item)] = self._host.run_worker(
            partial(self._upload, item), name="upload", group="uploads", exit_on_error=False
        )

    async def _upload(self, item: Pending) -> None:
        tray = self._tray()

        def progress(sent: int, total: int) -> None:
            # May be called off the event loop: the tray redraws through its message queue.
            item.sent, item.total = sent, total or item.total
            tray.post_message(AttachmentTray.Progress(item))

        uploader = cast("Attaches", self._backend)  # `capabilities.attachments` says it is one
        try:
            attachment = await uploader.upload(item.file.path, progress=progress)
        except TalkieError as error:
            self._host.sign_in_needed(error)
            item.state, item.error = "failed", error.message
            self._say(
                _("{name} was not uploaded: {error}").format(
                    name=item.file.filename, error=error.message
                ),
                "error",
            )
        except OSError as error:  # the file went away or became unreadable meanwhile
            item.state, item.error = "failed", error.strerror or str(error)
        else:
            item.state, item.attachment = "ready", attachment
            item.sent = item.total
        finally:
            self._uploads.pop(id(item), None)
        tray.show(item)

    # --- sending -------------------------------------------------------------------------

    def ready_count(self) -> int:
        """How many files are uploaded and would go with the next message."""
        return sum(1 for item in self.items if item.state == "ready")

    def not_ready(self) -> str | None:
        """Why the next message cannot go yet (files still uploading, or one failed)."""
        if uploading := self.uploading:
            return ngettext(
                "Wait: {count} file is still uploading.",
                "Wait: {count} files are still uploading.",
                uploading,
            ).format(count=uploading)
        failed = [item.file.filename for item in self.items if item.state == "failed"]
        if failed:
            return _("{name} was not uploaded: remove it (Delete), or attach it again.").format(
                name=failed[0]
            )
        return None

    def take(self, only: list[Pending] | None = None) -> list[Pending]:
        """The uploaded files (of `only`, for a retry), out of the tray: they go with the
        message being sent."""
        taken = [
            item for item in self.items if item.state == "ready" and (only is None or item in only)
        ]
        tray = self._tray()
        for item in taken:
            self.items.remove(item)
            tray.drop(item)
        return taken

    def give_back(self, items: list[Pending]) -> None:
        """The send failed: its files are the next message's again, first in the tray."""
        tray = self._tray()
        for item in reversed(items):
            if item in self.items:
                continue
            self.items.insert(0, item)
            tray.add(item, first=True)

    def sent(self, items: list[Pending]) -> None:
        """The message reached the server with its files: they are no longer pending."""
        tray = self._tray()
        for item in items:
            if item in self.items:  # a retry of a message whose files had come back
                self.items.remove(item)
                tray.drop(item)

    @staticmethod
    def attachments(items: list[Pending]) -> tuple[Attachment, ...]:
        """What the session names in the message for these files."""
        return tuple(item.attachment for item in items if item.attachment is not None)

    def _say(self, text: str, severity: Any) -> None:
        self._host.notify(text, severity=severity, markup=False, timeout=8)
