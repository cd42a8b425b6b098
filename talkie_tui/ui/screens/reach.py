"""The boxes by which a person reaches agents on a hub: a pairing code typed (and looked up),
the catalogue ("Find agents"), the archived conversations, what to do about a contact, and a
report about an agent.

Each box shows what it is given and answers with the person's choice (`dismiss`); the network
work is the caller's (`ui/reach.py`), except the code's look-up, run here in a worker while
the box shows that it is looking. Server text is placed as plain `Content`, never markup.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, OptionList, Static
from textual.widgets.option_list import Option

from talkie_tui.backends.parts.reach import (
    MAX_NOTE_CHARS,
    REPORT_REASONS,
    CatalogueEntry,
    Complaint,
    PairResolve,
    PublicAgent,
    ReportReason,
)
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.widgets.split_row import one_line

__all__ = [
    "ArchivedScreen",
    "CatalogueScreen",
    "CodePromptScreen",
    "ContactChoice",
    "ContactScreen",
    "ReportScreen",
    "agent_lines",
]

REASON_NAMES = {
    "spam": N_("Spam"),
    "impersonation": N_("Impersonation"),
    "abuse": N_("Abuse"),
    "other": N_("Something else"),
}


def agent_lines(agent: PublicAgent) -> Content:
    """An agent as a list shows it: its name and handle, what it does, how to start."""
    parts: list[Content | str | tuple[str, str]] = [(one_line(agent.name), "bold")]
    if agent.handle:
        parts += ["  ", (f"@{one_line(agent.handle)}", "dim")]
    if agent.description:
        parts += ["\n", Content(one_line(agent.description))]
    if agent.starters:
        starters = " · ".join(f"“{one_line(s)}”" for s in agent.starters)
        parts += ["\n", (starters, "italic dim")]
    return Content.assemble(*parts)


class _Box(LocalizedBindings[Any], ModalScreen[Any]):
    """A modal box of the reach screens: Esc closes it with no answer."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", N_("Close"))]

    def action_close(self) -> None:
        """Esc: no answer."""
        self.dismiss(None)

    def on_mount(self) -> None:
        """The box's list starts on its first row (Enter there is the person's own move)."""
        for options in self.query(OptionList):
            if options.option_count:
                options.highlighted = 0


class CodePromptScreen(_Box):
    """A pairing code typed, then looked up (`resolve`): the box answers with what the code
    adds, or says why it adds nothing and takes another code."""

    HELP_GROUP = N_("Add an agent by code")

    def __init__(
        self,
        resolve: Callable[[str], Awaitable[PairResolve]],
        code: str = "",
        problem: str = "",
    ) -> None:
        super().__init__()
        self._resolve = resolve
        self._code = code
        self._problem = problem
        self.code = ""  # the code the answer is for

    def compose(self) -> ComposeResult:
        """Title, the code box, what happens."""
        with Vertical(classes="reach-box"):
            yield Static(Content(_("Add an agent by code")), classes="reach-title")
            yield Static(
                Content(_("The agent's owner gives the code. Nothing is added before you say.")),
                classes="reach-hint",
            )
            yield Input(self._code, placeholder=_("Pairing code"), id="reach-code")
            yield Static(Content(self._problem), id="reach-status", classes="reach-status")

    @on(Input.Submitted, "#reach-code")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        code = event.value.strip()
        if not code:
            self._show(_("Type the code first."), error=True)
            return
        self._look_up(code)

    def _show(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#reach-status", Static)
        status.update(Content(text))
        status.set_class(error, "-error")

    @work(exclusive=True, exit_on_error=False, group="reach-code")
    async def _look_up(self, code: str) -> None:
        self._show(_("Looking the code up…"))
        try:
            resolved = await self._resolve(code)
        except TalkieError as error:
            self._show(
                _("This code adds nobody: {error} {hint}").format(
                    error=error.message, hint=error.retry_hint
                ),
                error=True,
            )
            return
        self.code = code
        self.dismiss(resolved)


class _ListBox(_Box):
    """A box of one list: Enter answers with the highlighted item."""

    AUTO_FOCUS = "#reach-list"
    BOX_CLASSES = "reach-box"

    def __init__(self, items: Sequence[Any]) -> None:
        super().__init__()
        self.items = list(items)

    def heading(self) -> str:
        """The box's title."""
        raise NotImplementedError

    def row_of(self, item: Any) -> Content:
        """How the list shows one item."""
        raise NotImplementedError

    def keys_hint(self) -> str:
        """The keys, or what an empty list means."""
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        """Title, the list, the keys."""
        with Vertical(classes=self.BOX_CLASSES):
            yield Static(Content(self.heading()), classes="reach-title")
            if self.items:
                rows: list[Option | None] = []
                for index, item in enumerate(self.items):
                    if index:
                        rows.append(None)  # a rule between items of several lines
                    rows.append(Option(self.row_of(item), id=str(index)))
                yield OptionList(*rows, id="reach-list", classes="reach-list")
            yield Static(Content(self.keys_hint()), classes="reach-hint")

    @on(OptionList.OptionSelected, "#reach-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.items[int(event.option.id or 0)])


class CatalogueScreen(_ListBox):
    """The agents their owners list publicly; Enter adds the highlighted one."""

    HELP_GROUP = N_("Find agents")
    BOX_CLASSES = "reach-box -wide"

    def heading(self) -> str:
        """ "Find agents"."""
        return _("Find agents")

    def row_of(self, item: CatalogueEntry) -> Content:
        """Its name, handle, description and starters; whether the person added it."""
        if not item.in_contacts:
            return agent_lines(item)
        added = _("✓ in your contacts: Enter opens the conversation")
        return Content.assemble(agent_lines(item), "\n", (added, "dim"))

    def keys_hint(self) -> str:
        """The keys, or that nothing is listed."""
        if not self.items:
            return _("No agent is listed on this hub yet. Esc closes.")
        return _("↑↓ choose · Enter adds and opens the conversation · Esc closes")


@dataclass(frozen=True, slots=True)
class ArchivedThread:
    """An archived conversation as the Archived box lists it."""

    id: str
    title: str


class ArchivedScreen(_ListBox):
    """The conversations the person archived; Enter opens one."""

    HELP_GROUP = N_("Archived conversations")

    def heading(self) -> str:
        """ "Archived conversations"."""
        return _("Archived conversations")

    def row_of(self, item: ArchivedThread) -> Content:
        """Its title."""
        return Content(one_line(item.title) or _("(untitled)"))

    def keys_hint(self) -> str:
        """The keys, or that nothing is archived."""
        if not self.items:
            return _("Nothing is archived.")
        return _("Enter opens · Ctrl+P → Contact brings one back to the list")


@dataclass(frozen=True, slots=True)
class ContactChoice:
    """One thing the person may do about a contact: its key and its words."""

    key: str
    label: str
    risky: bool = False


class ContactScreen(_Box):
    """What the person may do about the agent of the conversation on screen."""

    HELP_GROUP = N_("Contact")
    AUTO_FOCUS = "#reach-list"

    def __init__(self, agent: PublicAgent, state: str, choices: Sequence[ContactChoice]) -> None:
        super().__init__()
        self.agent = agent
        self.state = state
        self.choices = list(choices)

    def compose(self) -> ComposeResult:
        """The agent, where it stands, the choices."""
        with Vertical(classes="reach-box"):
            yield Static(agent_lines(self.agent), classes="reach-agent")
            if self.state:
                yield Static(Content(self.state), classes="reach-hint")
            yield OptionList(
                *(
                    Option(
                        Content.styled(c.label, "$text-error") if c.risky else Content(c.label),
                        id=c.key,
                    )
                    for c in self.choices
                ),
                id="reach-list",
                classes="reach-list",
            )
            yield Static(
                Content(_("Enter chooses · what cannot be undone asks first · Esc closes")),
                classes="reach-hint",
            )

    @on(OptionList.OptionSelected, "#reach-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)


class ReportScreen(_Box):
    """A report about an agent: the reason, a note, the message it is about. The Report
    button is reached only by a deliberate move (Cancel has the focus after the reason)."""

    HELP_GROUP = N_("Report an agent")
    AUTO_FOCUS = "#report-reasons"

    def __init__(self, agent: PublicAgent, message: tuple[str, str] | None) -> None:
        super().__init__()
        self.agent = agent
        self.message = message  # (its id, the start of its text): the agent's selected message
        self.reason: ReportReason | None = None

    def compose(self) -> ComposeResult:
        """The reasons, the note, the message, then Cancel and Report."""
        with Vertical(classes="reach-box"):
            title = _("Report {name}").format(name=one_line(self.agent.name))
            yield Static(Content(title), classes="reach-title")
            yield Static(Content(_("Why?")), classes="reach-hint")
            yield OptionList(
                *(Option(Content(_(REASON_NAMES[r])), id=r) for r in REPORT_REASONS),
                id="report-reasons",
                classes="reach-list",
            )
            yield Input(
                placeholder=_("A note for the hub (optional)"),
                max_length=MAX_NOTE_CHARS,
                id="report-note",
            )
            if self.message is not None:
                preview = one_line(self.message[1])[:60] or _("(a message)")
                yield Checkbox(
                    Content(_("About its message “{preview}”").format(preview=preview)),
                    value=True,
                    id="report-message",
                )
            with Horizontal(classes="reach-buttons"):
                yield Button(Content(_("Cancel")), id="report-cancel")
                yield Button(Content(_("Report")), id="report-send", variant="error")

    @on(OptionList.OptionSelected, "#report-reasons")
    def _reason(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option.id
        self.reason = next((r for r in REPORT_REASONS if r == chosen), None)
        self.query_one("#report-note", Input).focus()

    @on(Input.Submitted, "#report-note")
    def _noted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one("#report-cancel", Button).focus()  # the safe one: Report takes a move

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id != "report-send":
            self.dismiss(None)
            return
        if self.reason is None:
            self.notify(_("Choose why first."), severity="warning", markup=False)
            self.query_one("#report-reasons", OptionList).focus()
            return
        message_id = None
        if self.message is not None and self.query_one("#report-message", Checkbox).value:
            message_id = self.message[0]
        note = self.query_one("#report-note", Input).value.strip()
        self.dismiss(Complaint(self.reason, note or None, message_id))
