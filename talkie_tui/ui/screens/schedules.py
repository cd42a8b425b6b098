"""A hub conversation's schedules (palette: Schedules): what the agent runs on a timer there.

The panel lists each schedule (title, when it runs, its next run, paused or waiting for the
agent to confirm it) and follows the hub's `schedule.changed` pushes (the agent confirming one,
another device's change). `n` asks for a new one (an instruction and a cadence, in
`NewScheduleScreen`), `p` pauses or resumes the highlighted one, `d` deletes it after asking
(the safe answer focused), `r` reads the list again. A failure shows the hub's words.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from talkie_tui.backends.parts.schedules import Cadence, Schedule, Schedules
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import N_, _
from talkie_tui.ui.chat.schedule_words import CadenceError, local_zone, parse_cadence, schedule_line
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.support.localized import LocalizedBindings

__all__ = ["NewScheduleScreen", "SchedulesScreen"]

MAX_INSTRUCTION = 500
NewSchedule = tuple[str, Cadence]


def _failure(error: TalkieError) -> str:
    return f"{error.message} {error.retry_hint}".strip()


class SchedulesScreen(LocalizedBindings[None], ModalScreen[None]):
    """The schedules of one conversation, kept current; keys change them."""

    HELP_GROUP = N_("Schedules")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", N_("Close")),
        Binding("n", "new", N_("New schedule")),
        Binding("p", "pause", N_("Pause or resume")),
        Binding("d", "delete", N_("Delete")),
        Binding("r", "reload", N_("Reload")),
    ]

    def __init__(self, schedules: Schedules, agent_name: str) -> None:
        super().__init__()
        self.schedules = schedules
        self.agent_name = agent_name
        self.supported: bool | None = None  # known once loaded

    def compose(self) -> ComposeResult:
        with Vertical(classes="schedules-box"):
            yield Static(self._title(), id="schedules-title", classes="picker-title")
            yield Static(_("Loading…"), id="schedules-status", classes="schedules-status")
            yield OptionList(id="schedules-list", classes="schedules-list")
            yield Static(
                _("n new · p pause or resume · d delete · r reload · Esc close"),
                classes="schedules-hint",
            )

    def _title(self) -> Content:
        return Content(_("Schedules with {agent}").format(agent=self.agent_name))

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        self.reload()
        self.follow()

    @property
    def status_text(self) -> str:
        """What the status line says."""
        return str(self.query_one("#schedules-status", Static).content)

    def _say(self, text: str) -> None:
        self.query_one("#schedules-status", Static).update(Content(text))

    def show_items(self) -> None:
        """Draw the list as the schedules now stand (the highlight stays where it was)."""
        listing = self.query_one(OptionList)
        highlighted = self.highlighted
        items = self.schedules.items
        listing.clear_options()
        listing.add_options([Option(Content(schedule_line(s)), id=s.id) for s in items])
        ids = [s.id for s in items]
        if highlighted is not None and highlighted.id in ids:
            listing.highlighted = ids.index(highlighted.id)
        elif ids:
            listing.highlighted = 0  # the keys act on a schedule from the start
        listing.set_class(not ids, "-empty")  # no empty frame: the status line says why
        if ids and self.focused is None:
            listing.focus()
        if self.supported is False:
            self._say(_("{agent} runs no schedules.").format(agent=self.agent_name))
        elif not items:
            self._say(_("No schedules yet: n asks the agent for one."))
        else:
            self._say(_("A new or changed schedule runs once the agent confirms it."))

    @property
    def highlighted(self) -> Schedule | None:
        """The schedule under the highlight."""
        listing = self.query_one(OptionList)
        index = listing.highlighted
        if index is None:
            return None
        option_id = listing.get_option_at_index(index).id
        return next((s for s in self.schedules.items if s.id == option_id), None)

    @work(exclusive=True, group="schedules-load", exit_on_error=False)
    async def reload(self) -> None:
        """Read the schedules from the hub."""
        self._say(_("Loading…"))
        try:
            self.supported = await self.schedules.supported()
            if self.schedules.agent_name:
                self.agent_name = self.schedules.agent_name
                self.query_one("#schedules-title", Static).update(self._title())
            if self.supported:
                await self.schedules.load()
        except TalkieError as error:
            self._say(_failure(error))
            return
        self.show_items()

    @work(exclusive=True, group="schedules-follow", exit_on_error=False)
    async def follow(self) -> None:
        """Keep the list current with the hub's pushes."""
        try:
            async for _push in self.schedules.changes():
                self.show_items()
        except TalkieError as error:
            self._say(_failure(error))

    def action_reload(self) -> None:
        """Read the list again."""
        self.reload()

    def action_new(self) -> None:
        """Ask the agent for a new schedule."""
        if self.supported is False:
            return

        def made(answer: NewSchedule | None) -> None:
            if answer is not None:
                self._change(self.schedules.create(*answer))

        self.app.push_screen(NewScheduleScreen(self.agent_name), made)

    @work(group="schedules-change", exit_on_error=False)
    async def _change(self, change: Awaitable[object]) -> None:
        """Make a change on the hub, then draw the list (or say why it failed)."""
        try:
            await change
        except TalkieError as error:
            self._say(_failure(error))
            return
        self.show_items()

    def action_pause(self) -> None:
        """Pause the highlighted schedule, or resume it."""
        schedule = self.highlighted
        if schedule is not None:
            self._change(self.schedules.set_paused(schedule.id, not schedule.paused))

    def action_delete(self) -> None:
        """Delete the highlighted schedule, after asking."""
        schedule = self.highlighted
        if schedule is None:
            return

        def answered(delete: bool | None) -> None:
            if delete and schedule is not None:
                self._change(self.schedules.delete(schedule.id))

        title = _("Delete the schedule “{title}”?").format(title=schedule.title)
        body = _("The agent sends nothing more for it.")
        self.app.push_screen(
            ConfirmScreen(title, body, confirm_label=_("Delete"), danger=True), answered
        )


class NewScheduleScreen(LocalizedBindings[NewSchedule | None], ModalScreen[NewSchedule | None]):
    """What the agent is to do and when: Enter in the instruction goes to the cadence, Enter
    there asks for it (a cadence that does not read says how to write one)."""

    HELP_GROUP = N_("New schedule")
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", N_("Cancel"))]

    def __init__(self, agent_name: str) -> None:
        super().__init__()
        self.agent_name = agent_name
        self.zone = local_zone()

    def compose(self) -> ComposeResult:
        with Vertical(classes="schedules-box"):
            title = _("A new schedule with {agent}").format(agent=self.agent_name)
            yield Static(Content(title), classes="picker-title")
            yield Input(
                placeholder=_("What the agent does, e.g. Send me the day's news"),
                max_length=MAX_INSTRUCTION,
                id="schedule-instruction",
                classes="schedules-form-row",
            )
            yield Input("daily 09:00", id="schedule-cadence", classes="schedules-form-row")
            hint = _(
                'When: "daily 08:00", "weekdays 07:30", "weekly mon,fri 09:00", '
                '"once 2026-12-24 18:00" (time zone {zone}).'
            ).format(zone=self.zone)
            yield Static(Content(hint), classes="schedules-hint")
            yield Static("", id="schedule-error", classes="schedules-status")

    def on_mount(self) -> None:
        self.query_one("#schedule-instruction", Input).focus()

    @on(Input.Submitted, "#schedule-instruction")
    def _instruction_done(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#schedule-cadence", Input).focus()

    @on(Input.Submitted, "#schedule-cadence")
    def _cadence_done(self, event: Input.Submitted) -> None:
        event.stop()
        instruction = self.query_one("#schedule-instruction", Input).value.strip()
        error = self.query_one("#schedule-error", Static)
        if not instruction:
            error.update(Content(_("Write what the agent is to do first.")))
            self.query_one("#schedule-instruction", Input).focus()
            return
        try:
            cadence = parse_cadence(event.value, self.zone)
        except CadenceError as problem:
            error.update(Content(str(problem)))
            return
        self.dismiss((instruction, cadence))
