"""The command palette (Ctrl+P): talkie's everyday commands, each an app action by name."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from talkie_tui.i18n import N_, _

__all__ = ["COMMANDS", "PaletteCommand", "TalkieCommands"]


@dataclass(frozen=True)
class PaletteCommand:
    """One palette entry: its name, what it does, and the app action it runs.

    `name` and `help` are English, marked with `N_()`; the palette shows them translated.
    """

    name: str
    help: str
    action: str


COMMANDS: tuple[PaletteCommand, ...] = (
    PaletteCommand(N_("New thread"), N_("Start a new conversation"), "new_thread"),
    PaletteCommand(N_("Switch server"), N_("Go back to the list of servers"), "switch_server"),
    PaletteCommand(N_("Sign in"), N_("Sign in to this server again, in the browser"), "sign_in"),
    PaletteCommand(
        N_("Sign out"), N_("Revoke the sign-in at this server and forget its tokens"), "sign_out"
    ),
    PaletteCommand(
        N_("Export thread"), N_("Save the open thread as a Markdown file"), "export_thread"
    ),
    PaletteCommand(N_("Toggle sidebar"), N_("Show or hide the thread list"), "toggle_sidebar"),
    PaletteCommand(N_("Voice call"), N_("Talk with the agent in this thread (F5)"), "voice_call"),
    PaletteCommand(N_("Hang up"), N_("End the voice call (F5)"), "hang_up"),
    PaletteCommand(
        N_("Hands-free or push-to-talk"), N_("Switch how the voice call listens (F7)"), "voice_mode"
    ),
    PaletteCommand(
        N_("Model for this thread"),
        N_("Choose the model and reasoning effort of this thread's next messages"),
        "choose_model",
    ),
    PaletteCommand(N_("Attach a file"), N_("Send a file with the next message (Ctrl+F)"), "attach"),
    PaletteCommand(
        N_("Reply to this message"),
        N_("Answer the selected message (r), or the agent's last, quoting it"),
        "reply",
    ),
    PaletteCommand(N_("Dictate"), N_("Speak the next message, then review it (F6)"), "dictate"),
    PaletteCommand(
        N_("Devices"),
        N_("The devices signed in to this server, and what it keeps for you"),
        "devices",
    ),
    PaletteCommand(
        N_("Add an agent by code"),
        N_("Join an agent with the code its owner gave you"),
        "add_by_code",
    ),
    PaletteCommand(
        N_("Find agents"), N_("The agents listed publicly on this hub, to add one"), "find_agents"
    ),
    PaletteCommand(
        N_("Contact"),
        N_("Pin, mute, archive, remove, block or report this conversation's agent"),
        "contact",
    ),
    PaletteCommand(N_("Archived"), N_("The conversations you archived"), "archived"),
    PaletteCommand(N_("Help"), N_("Every key, and how links and actions work"), "help"),
)


class TalkieCommands(Provider):
    """Offers `COMMANDS`; hides those the app says are unavailable (`check_action` -> False)."""

    def _available(self) -> list[PaletteCommand]:
        app = self.app
        # `check_action` lets the app hide a command that makes no sense now (no thread to
        # export, nothing to sign out of); None means shown but disabled, which we still offer
        # so that running it can explain why it did nothing.
        return [c for c in COMMANDS if app.check_action(c.action, ()) is not False]

    def _run(self, command: PaletteCommand) -> Callable[[], Awaitable[bool]]:
        return partial(self.app.run_action, command.action)

    async def discover(self) -> Hits:
        """All commands, shown before anything is typed."""
        for command in self._available():
            yield DiscoveryHit(Content(_(command.name)), self._run(command), help=_(command.help))

    async def search(self, query: str) -> Hits:
        """Commands whose name, as shown, matches `query` (fuzzy)."""
        matcher = self.matcher(query)
        for command in self._available():
            name = _(command.name)
            score = matcher.match(name)
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(name),
                    self._run(command),
                    text=name,
                    help=_(command.help),
                )
