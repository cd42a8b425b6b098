"""Reaching agents on a hub, from the chat screen: a pairing code ("Add an agent by code",
`talkie connect HUB --pair CODE`), the catalogue ("Find agents"), the archived conversations,
and what the person does about the agent of the conversation on screen ("Contact": pin, mute,
archive, remove, block, report).

The flows run in the screen's workers; the boxes (`screens/reach.py`) show and answer. A code
is looked up first and accepted only after a confirmation whose safe answer has the focus;
remove, block and report take a second step too. What the person added opens at once.

As a conversation opens, `shown` asks the hub what it shows first: while nothing was said the
agent's starters, as quick replies (one key each, through the decision standard like any);
with a blocked agent a notice that it is blocked, and the composer takes no message.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, Self

from talkie_tui.backends.parts.reach import MUTE_CHOICES, ReachesAgents
from talkie_tui.chat.turns import NoticePart, QuickRepliesPart, Turn
from talkie_tui.core.errors import TalkieError
from talkie_tui.i18n import _, ngettext
from talkie_tui.ui.chat.taps import TapHost
from talkie_tui.ui.screens.confirm import ConfirmScreen

# The boxes are imported when a flow runs: a session with a server that reaches no agents
# does not load them.
if TYPE_CHECKING:
    from textual.worker import Worker

    from talkie_tui.backends.base import Backend
    from talkie_tui.backends.parts.reach import (
        AgentReach,
        Complaint,
        Contact,
        PairResolve,
        PublicAgent,
    )
    from talkie_tui.ui.screens.reach import ContactChoice

__all__ = ["BLOCKED_ID", "STARTERS_ID", "Reach", "ReachHost"]

# Turns of the screen's own, ordered before every message of the hub ("h" < "m").
STARTERS_ID = "hub-starters"
BLOCKED_ID = "hub-blocked"


class ReachHost(TapHost, Protocol):
    """What reaching agents needs of the chat screen; `ChatScreen` is one."""

    def open_thread(self, thread_id: str, message_id: str | None = None) -> Worker[None]:
        """Open a conversation."""

    def refresh_threads(self) -> None:
        """Reload the thread list."""

    def action_new_thread(self) -> None:
        """Leave the conversation on screen for a new thread."""

    def action_focus_composer(self) -> None:
        """Put the cursor in the composer."""

    def set_class(self, add: bool, *class_names: str, update: bool = True) -> Self:
        """Add or remove the screen's classes (a blocked agent's conversation is styled so)."""


def _mute_words(hours: float) -> str:
    if hours < 24:
        count = int(hours)
        return ngettext("Mute for {count} hour", "Mute for {count} hours", count).format(
            count=count
        )
    days = int(hours // 24)
    return ngettext("Mute for {count} day", "Mute for {count} days", days).format(count=days)


def contact_state(contact: Contact) -> str:
    """Where a contact stands, in words ("pinned · muted until 18:00 · blocked")."""
    words = []
    if contact.pinned:
        words.append(_("pinned"))
    if contact.muted() and contact.muted_until is not None:
        until = contact.muted_until.astimezone().strftime("%Y-%m-%d %H:%M")
        words.append(_("muted until {time}").format(time=until))
    if contact.archived:
        words.append(_("archived"))
    if contact.blocked:
        words.append(_("blocked"))
    return " · ".join(words)


def contact_choices(contact: Contact) -> list[ContactChoice]:
    """What the person may do about a contact, the risky ones marked."""
    from talkie_tui.ui.screens.reach import ContactChoice

    choices = [
        ContactChoice(
            "unpin" if contact.pinned else "pin",
            _("Unpin") if contact.pinned else _("Pin to the top"),
        )
    ]
    if contact.muted():
        choices.append(ContactChoice("unmute", _("Unmute")))
    else:
        for index, length in enumerate(MUTE_CHOICES):
            choices.append(
                ContactChoice(f"mute:{index}", _mute_words(length.total_seconds() / 3600))
            )
    if contact.archived:
        choices.append(ContactChoice("unarchive", _("Back to the list (unarchive)")))
    else:
        choices.append(ContactChoice("archive", _("Archive")))
    if contact.blocked:
        choices.append(ContactChoice("unblock", _("Unblock")))
    else:
        choices.append(ContactChoice("block", _("Block…"), risky=True))
    choices.append(ContactChoice("report", _("Report…"), risky=True))
    choices.append(ContactChoice("remove", _("Remove from contacts…"), risky=True))
    return choices


class Reach:
    """Pairing, the catalogue and contacts of one chat screen on a hub."""

    def __init__(self, host: ReachHost, backend: Backend) -> None:
        self._host = host
        self._backend = backend
        self._blocked_composer = False  # the composer was made read-only here

    @property
    def offered(self) -> bool:
        """True where the backend reaches agents (a hub: the only protocol that does)."""
        return isinstance(self._backend, ReachesAgents)

    def _reach(self) -> AgentReach | None:
        backend = self._backend
        if not isinstance(backend, ReachesAgents):
            self._host.notify(
                _("Only a Cuckoo hub adds agents by code or from a catalogue."),
                severity="warning",
                markup=False,
            )
            return None
        return backend.reach

    def _run(self, work: Any, name: str) -> None:
        self._host.run_worker(work, name=name, group="hub-reach", exit_on_error=False)

    def _failed(self, what: str, error: TalkieError) -> None:
        if self._host.sign_in_needed(error):
            return
        self._host.notify(
            _("{what}: {error} {hint}").format(
                what=what, error=error.message, hint=error.retry_hint
            ),
            severity="error",
            markup=False,
        )

    def _open(self, conversation_id: str) -> None:
        self._host.refresh_threads()
        self._host.open_thread(conversation_id)
        # What is typed next is for the agent just added, even when the thread list's
        # "Find agents" had the focus (its keys would start a thread or search again).
        self._host.action_focus_composer()

    # --- a pairing code ------------------------------------------------------------------

    def add_by_code(self, code: str | None = None) -> None:
        """Ask for a code (or take `code`), look it up, confirm, add, open."""
        reach = self._reach()
        if reach is not None:
            self._run(partial(self._add_by_code, reach, code or ""), "add_by_code")

    async def _add_by_code(self, reach: AgentReach, code: str) -> None:
        app = self._host.app
        resolved: PairResolve | None = None
        problem = ""
        if code:  # given on the command line: looked up at once, asked again if it fails
            try:
                resolved = await reach.resolve_code(code)
            except TalkieError as error:
                if self._host.sign_in_needed(error):
                    return
                problem = _("This code adds nobody: {error} {hint}").format(
                    error=error.message, hint=error.retry_hint
                )
        if resolved is None:
            from talkie_tui.ui.screens.reach import CodePromptScreen

            prompt = CodePromptScreen(reach.resolve_code, code, problem)
            resolved = await app.push_screen_wait(prompt)
            if resolved is None:
                return
            code = prompt.code
        agent = resolved.agent
        if not await self._confirm_adding(agent, resolved):
            return
        try:
            accepted = await reach.accept_code(code)
        except TalkieError as error:
            self._failed(_("Not added"), error)
            return
        self._host.notify(_("{name} added.").format(name=agent.name), markup=False)
        self._open(accepted.conversation.id)

    async def _confirm_adding(self, agent: PublicAgent, resolved: PairResolve) -> bool:
        lines = [f"@{agent.handle}" if agent.handle else "", agent.description]
        label = resolved.pair_token.label if resolved.pair_token is not None else None
        if label:
            lines.append(_("Code: {label}").format(label=label))
        lines.append(_("The agent learns your name and the code, and can write to you."))
        confirmed = await self._host.app.push_screen_wait(
            ConfirmScreen(
                _("Add {name}?").format(name=agent.name),
                "\n".join(line for line in lines if line),
                confirm_label=_("Add"),
            )
        )
        return bool(confirmed)

    # --- the catalogue -------------------------------------------------------------------

    def find_agents(self) -> None:
        """The catalogue: the chosen agent is added and its conversation opens."""
        reach = self._reach()
        if reach is not None:
            self._run(partial(self._find_agents, reach), "find_agents")

    async def _find_agents(self, reach: AgentReach) -> None:
        try:
            entries = await reach.catalogue()
        except TalkieError as error:
            self._failed(_("The catalogue could not be read"), error)
            return
        from talkie_tui.ui.screens.reach import CatalogueScreen

        entry = await self._host.app.push_screen_wait(CatalogueScreen(entries))
        if entry is None:
            return
        try:
            added = await reach.add(entry.id)
        except TalkieError as error:
            self._failed(_("Not added"), error)
            return
        if added.new:
            self._host.notify(_("{name} added.").format(name=entry.name), markup=False)
        self._open(added.conversation.id)

    # --- archived conversations ----------------------------------------------------------

    def archived(self) -> None:
        """The archived conversations; the chosen one opens."""
        reach = self._reach()
        if reach is not None:
            self._run(partial(self._archived, reach), "archived")

    async def _archived(self, reach: AgentReach) -> None:
        try:
            threads = await reach.archived()
        except TalkieError as error:
            self._failed(_("The archived conversations could not be read"), error)
            return
        from talkie_tui.ui.screens.reach import ArchivedScreen, ArchivedThread

        shown = [ArchivedThread(t.id, t.title) for t in threads]
        chosen = await self._host.app.push_screen_wait(ArchivedScreen(shown))
        if chosen is not None:
            self._host.open_thread(chosen.id)

    # --- the contact of the conversation on screen ---------------------------------------

    def contact(self) -> None:
        """What to do about the agent of the conversation on screen."""
        reach = self._reach()
        if reach is None:
            return
        conversation_id = self._host.session.thread_id
        if conversation_id is None:
            self._host.notify(
                _("Open a conversation with the agent first."), severity="warning", markup=False
            )
            return
        self._run(partial(self._contact, reach, conversation_id), "contact")

    async def _contact(self, reach: AgentReach, conversation_id: str) -> None:
        try:
            opening = await reach.opening(conversation_id)
            agent = opening.agent
            contact = await reach.contact(agent.id) if agent is not None else None
        except TalkieError as error:
            self._failed(_("The contact could not be read"), error)
            return
        if contact is None:
            self._host.notify(
                _("This conversation's agent is not among your contacts."),
                severity="warning",
                markup=False,
            )
            return
        from talkie_tui.ui.screens.reach import ContactScreen

        choice = await self._host.app.push_screen_wait(
            ContactScreen(contact.agent, contact_state(contact), contact_choices(contact))
        )
        if choice is None:
            return
        try:
            done = await self._do(reach, contact, choice)
        except TalkieError as error:
            self._failed(_("Not done"), error)
            return
        if done:
            self._host.notify(done, markup=False)
            self._host.refresh_threads()
            if choice in ("block", "unblock"):
                self.shown()

    async def _do(self, reach: AgentReach, contact: Contact, choice: str) -> str | None:
        """Do `choice` about `contact` (asking first where it is risky): what was done."""
        agent_id, name = contact.id, contact.agent.name
        if choice in ("pin", "unpin"):
            await reach.pin(agent_id, choice == "pin")
            done = _("{name} pinned.") if choice == "pin" else _("{name} unpinned.")
            return done.format(name=name)
        if choice.startswith("mute:"):
            until = datetime.now(UTC) + MUTE_CHOICES[int(choice.partition(":")[2])]
            await reach.mute(agent_id, until)
            when = until.astimezone().strftime("%Y-%m-%d %H:%M")
            return _("{name} muted until {time}.").format(name=name, time=when)
        if choice == "unmute":
            await reach.mute(agent_id, None)
            return _("{name} unmuted.").format(name=name)
        if choice in ("archive", "unarchive"):
            await reach.archive(agent_id, choice == "archive")
            if choice == "archive":
                return _("{name} archived: Ctrl+P → Archived finds it.").format(name=name)
            return _("{name} is back in the list.").format(name=name)
        if choice == "unblock":
            await reach.block(agent_id, False)
            return _("{name} unblocked.").format(name=name)
        if choice == "block":
            if not await self._sure(
                _("Block {name}?").format(name=name),
                _(
                    "It leaves your conversation and cannot write to you; you cannot write to it "
                    "either until you unblock it."
                ),
                _("Block"),
            ):
                return None
            await reach.block(agent_id, True)
            return _("{name} blocked.").format(name=name)
        if choice == "remove":
            if not await self._sure(
                _("Remove {name} from your contacts?").format(name=name),
                _("Its conversation leaves your list. A code or the catalogue adds it again."),
                _("Remove"),
            ):
                return None
            await reach.remove(agent_id)
            if self._host.session.thread_id == contact.conversation_id:
                self._host.action_new_thread()  # its conversation is no longer listed
            return _("{name} removed.").format(name=name)
        if choice == "report":
            return await self._report(reach, contact)
        return None

    async def _sure(self, title: str, body: str, label: str) -> bool:
        confirmed = await self._host.app.push_screen_wait(
            ConfirmScreen(title, body, confirm_label=label, danger=True)
        )
        return bool(confirmed)

    async def _report(self, reach: AgentReach, contact: Contact) -> str | None:
        message = None
        selected = self._host.transcript.selected
        if selected is not None and selected.role == "assistant" and selected.id.startswith("msg_"):
            message = (selected.id, selected.text)
        from talkie_tui.ui.screens.reach import ReportScreen

        answer: Complaint | None = await self._host.app.push_screen_wait(
            ReportScreen(contact.agent, message)
        )
        if answer is None:
            return None
        await reach.report(contact.id, answer)
        return _("Reported {name}. Thank you.").format(name=contact.agent.name)

    # --- what a conversation shows as it opens -------------------------------------------

    def shown(self) -> None:
        """The conversation on screen changed: its starters, or that its agent is blocked."""
        self._unblock_composer()
        conversation_id = self._host.session.thread_id
        backend = self._backend
        if conversation_id is None or not isinstance(backend, ReachesAgents):
            return
        self._run(partial(self._opening, backend.reach, conversation_id), "opening")

    def _unblock_composer(self) -> None:
        if self._blocked_composer:
            self._set_blocked(False)

    def _set_blocked(self, blocked: bool) -> None:
        """The composer takes no message while the agent is blocked, and the line saying the
        agent is away (and what is sent waits for it) is not shown: nothing is sent."""
        self._blocked_composer = blocked
        self._host.composer.read_only = blocked
        self._host.set_class(blocked, "-agent-blocked")

    async def _opening(self, reach: AgentReach, conversation_id: str) -> None:
        try:
            opening = await reach.opening(conversation_id)
        except TalkieError:
            return  # only a comfort: the conversation shows without it
        session = self._host.session
        if session.thread_id != conversation_id:
            return  # another conversation is on screen by now
        conversation = session.conversation
        turns = conversation.turns
        before = len(turns)
        turns[:] = [t for t in turns if t.id not in (STARTERS_ID, BLOCKED_ID)]
        changed = len(turns) != before
        name = opening.agent.name if opening.agent is not None else None
        if opening.blocked:
            text = _("You blocked this agent: it takes no messages. Ctrl+P → Contact unblocks it.")
            notice = NoticePart(text, level="warning")  # our words: no server code to show
            turns.insert(0, Turn(BLOCKED_ID, "assistant", [notice], author=name))
            self._set_blocked(True)
        elif opening.starters and not any(t.id.startswith("msg_") for t in turns):
            starters = QuickRepliesPart(list(opening.starters))
            turns.insert(0, Turn(STARTERS_ID, "assistant", [starters], author=name))
        elif not changed:
            return  # nothing to add, nothing taken away: the transcript stays as it is
        self._host.transcript.show(conversation)
