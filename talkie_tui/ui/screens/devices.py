"""The devices screen (palette: Devices): every device signed in as the person, and storage.

Each device shows its name and when it was last used; the one in use here is marked "this
device". The highlighted device is signed out with `e` (or its button), every device but this
one with `o`; both ask first, the safe answer focused. This device is not signed out here (that
is Sign out, which also forgets its token). The storage line says how much of the person's file
budget is used and since when messages are kept. Everything comes from the backend's `Devices`;
a failure shows the server's words, and `r` reads the list again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, OptionList, Static
from textual.widgets.option_list import Option

from talkie_tui.backends.parts.devices import Devices, SignedInDevice, StorageUse
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _, ngettext
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.widgets.card import human_size

__all__ = ["DevicesScreen", "last_used_words", "storage_words"]

MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


def last_used_words(moment: datetime | None, now: float) -> str:
    """When a device was last used, for people: "just now", "5 min ago", "3 h ago",
    "4 days ago" (a week or more: the date)."""
    if moment is None:
        return _("not used yet")
    stamp = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    ago = max(0.0, now - stamp)
    if ago < MINUTE:
        return _("used just now")
    if ago < HOUR:
        return _("used {count} min ago").format(count=int(ago // MINUTE))
    if ago < DAY:
        return _("used {count} h ago").format(count=int(ago // HOUR))
    days = int(ago // DAY)
    if days < 7:
        return ngettext("used {count} day ago", "used {count} days ago", days).format(count=days)
    return _("last used {date}").format(date=moment.astimezone().strftime("%Y-%m-%d"))


def storage_words(storage: StorageUse) -> str:
    """ "Files: 12.4 MB of 100 MB · messages kept for 90 days, since 2026-03-02"."""
    files = _("Files: {used} of {budget}").format(
        used=human_size(storage.used_bytes), budget=human_size(storage.budget_bytes)
    )
    if storage.budget_bytes <= 0:
        files = _("Files: {used}").format(used=human_size(storage.used_bytes))
    if storage.kept_days <= 0:
        return files
    kept = ngettext(
        "messages kept for {count} day", "messages kept for {count} days", storage.kept_days
    ).format(count=storage.kept_days)
    if storage.kept_since is not None:
        since = storage.kept_since
        since = since if since.tzinfo else since.replace(tzinfo=UTC)
        kept = _("{kept}, since {date}").format(
            kept=kept, date=since.astimezone().strftime("%Y-%m-%d")
        )
    return f"{files} · {kept}"


class DevicesScreen(LocalizedBindings[None], Screen[None]):
    """The person's signed-in devices: looked at, one ended, or all but this one."""

    HELP_GROUP = N_("Devices screen")
    AUTO_FOCUS = "#devices-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", N_("Back")),
        Binding("e", "end_one", N_("Sign out the device")),
        Binding("o", "end_others", N_("Sign out all others")),
        Binding("r", "reload", N_("Reload")),
    ]

    def __init__(
        self, backend: Devices, server_name: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__()
        self._backend = backend
        self.server_name = clean_text(server_name)
        self._clock = clock
        self.devices: tuple[SignedInDevice, ...] = ()

    def compose(self) -> ComposeResult:
        """Title, the list, the storage line, the status and the buttons."""
        with Vertical(id="devices-box"):
            yield Static(
                Content(_("Devices signed in to {name}").format(name=self.server_name)),
                id="devices-title",
            )
            yield OptionList(id="devices-list", markup=False)
            yield Static(Content(""), id="devices-storage")
            yield Static(Content(""), id="devices-status")
            with Horizontal(id="devices-buttons"):
                yield Button(Content(_("Sign out the device")), id="devices-end-one")
                yield Button(Content(_("Sign out all other devices")), id="devices-end-others")
                yield Button(Content(_("Back")), id="devices-back")
            yield Static(
                Content(_("e signs out the device · o all others · r reloads · Esc goes back")),
                id="devices-hints",
            )

    def on_mount(self) -> None:
        """Read the list; the list takes the keys."""
        self.query_one("#devices-list", OptionList).focus()
        self.load()

    # --- reading -----------------------------------------------------------------------------

    @property
    def status_text(self) -> str:
        """What the status line says now (plain text; for tests and screen readers)."""
        return str(self.query_one("#devices-status", Static).content)

    @property
    def storage_text(self) -> str:
        """What the storage line says now."""
        return str(self.query_one("#devices-storage", Static).content)

    def _set_status(self, text: str, kind: str = "info") -> None:
        status = self.query_one("#devices-status", Static)
        status.update(Content(text))
        status.set_classes(f"devices-{kind}")

    @work(exclusive=True, group="devices", exit_on_error=False)
    async def load(self) -> None:
        """Read the devices (and the storage) from the server."""
        self._set_status(_("Reading the devices…"), "busy")
        try:
            listed = await self._backend.devices()
        except TalkieError as error:
            self._set_status(self._failed(_("The devices could not be read"), error), "error")
            return
        self._show(listed)
        self._set_status("")
        try:
            storage = await self._backend.storage()
        except TalkieError:
            return  # the devices are what this screen is for; the line stays empty
        self.query_one("#devices-storage", Static).update(Content(storage_words(storage)))

    def _show(self, listed: Sequence[SignedInDevice]) -> None:
        def order(device: SignedInDevice) -> tuple[bool, float]:
            """This device first, then the most recently used."""
            used = device.last_used
            if used is None:
                return (not device.current, 0.0)
            stamp = (used if used.tzinfo else used.replace(tzinfo=UTC)).timestamp()
            return (not device.current, -stamp)

        self.devices = tuple(sorted(listed, key=order))
        options = self.query_one("#devices-list", OptionList)
        highlighted = options.highlighted
        options.clear_options()
        now = self._clock()
        options.add_options(
            [Option(self._row(device, now), id=device.id) for device in self.devices]
        )
        if self.devices:
            options.highlighted = min(highlighted or 0, len(self.devices) - 1)
        others = sum(1 for device in self.devices if not device.current)
        self.query_one("#devices-end-others", Button).disabled = others == 0

    def _row(self, device: SignedInDevice, now: float) -> Content:
        name = clean_text(device.name) or _("(a device without a name)")
        used = last_used_words(device.last_used, now)
        if device.current:
            return Content(f"● {name} · {_('this device')}  {used}")
        return Content(f"  {name}  {used}")

    @staticmethod
    def _failed(what: str, error: TalkieError) -> str:
        return (
            _("{what}: {message} {hint}")
            .format(what=what, message=clean_text(error.message), hint=error.retry_hint)
            .strip()
        )

    # --- ending ------------------------------------------------------------------------------

    def _highlighted(self) -> SignedInDevice | None:
        index = self.query_one("#devices-list", OptionList).highlighted
        if index is None or not 0 <= index < len(self.devices):
            return None
        return self.devices[index]

    def action_end_one(self) -> None:
        """Ask, then sign out the highlighted device (never this one: that is Sign out)."""
        device = self._highlighted()
        if device is None:
            return
        if device.current:
            self._set_status(
                _("This is the device you are using: to sign it out, use Sign out (Ctrl+P)."),
                "error",
            )
            return
        name = clean_text(device.name) or _("(a device without a name)")

        def answered(yes: bool | None) -> None:
            if yes:
                self._end(device.id, name)

        self.app.push_screen(
            ConfirmScreen(
                _("Sign out {name}?").format(name=name),
                _("It will have to sign in again with a new code."),
                confirm_label=_("Sign out"),
                danger=True,
            ),
            answered,
        )

    def action_end_others(self) -> None:
        """Ask, then sign out every device but this one."""
        others = sum(1 for device in self.devices if not device.current)
        if not others:
            self._set_status(_("No other device is signed in."))
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._end(None, "")

        self.app.push_screen(
            ConfirmScreen(
                ngettext(
                    "Sign out {count} other device?", "Sign out {count} other devices?", others
                ).format(count=others),
                _("Only this device stays signed in."),
                confirm_label=_("Sign out"),
                danger=True,
            ),
            answered,
        )

    @work(exclusive=True, group="devices", exit_on_error=False)
    async def _end(self, device_id: str | None, name: str) -> None:
        self._set_status(_("Signing out…"), "busy")
        try:
            if device_id is None:
                await self._backend.end_other_devices()
            else:
                await self._backend.end_device(device_id)
        except TalkieError as error:
            self._set_status(self._failed(_("Not signed out"), error), "error")
            return
        done = (
            _("Every other device is signed out.")
            if device_id is None
            else _("{name} is signed out.").format(name=name)
        )
        try:
            listed = await self._backend.devices()
        except TalkieError:
            self._set_status(done)
            return
        self._show(listed)
        self._set_status(done)

    # --- the rest ----------------------------------------------------------------------------

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "devices-end-one":
            self.action_end_one()
        elif event.button.id == "devices-end-others":
            self.action_end_others()
        elif event.button.id == "devices-back":
            self.action_close()

    def action_reload(self) -> None:
        """Read the list again."""
        self.load()

    def action_close(self) -> None:
        """Back to the chat."""
        self.workers.cancel_group(self, "devices")
        self.dismiss(None)
