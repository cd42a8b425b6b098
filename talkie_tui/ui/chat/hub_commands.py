"""The palette's commands of a hub (shown only on a chat with a Cuckoo hub): earlier messages,
the schedules, hiding a message or the conversation for oneself, and one's name. Each runs the
`HubActions` method its `action` names, where the backend has the parts they need
(`HubParts`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from talkie_tui.core.lazy import is_loaded_instance
from talkie_tui.i18n import N_
from talkie_tui.ui.support.palette import PaletteCommand, TalkieCommands

if TYPE_CHECKING:
    from talkie_tui.ui.chat.hub_actions import HubActions
    from talkie_tui.ui.chat.screen import ChatScreen

__all__ = ["HUB_COMMANDS", "HubCommands"]


HUB_COMMANDS: tuple[PaletteCommand, ...] = (
    PaletteCommand(
        N_("Earlier messages"),
        N_("Load the older messages of this conversation (or scroll to its top)"),
        "earlier",
    ),
    PaletteCommand(
        N_("Schedules"),
        N_("What the agent here runs on a timer: new, pause, resume, delete"),
        "schedules",
    ),
    PaletteCommand(
        N_("Hide this message for me"),
        N_("The selected message leaves your view on every device; the agent keeps it"),
        "hide_selected",
    ),
    PaletteCommand(
        N_("Clear this conversation for me"),
        N_("Every message so far leaves your view; the agent keeps them"),
        "clear",
    ),
    PaletteCommand(
        N_("Change your name"),
        N_("The display name agents and people on this hub see"),
        "rename",
    ),
)


class HubCommands(TalkieCommands):
    """Offers `HUB_COMMANDS` while the screen under the palette is a chat with a hub (the
    listing and the search are `TalkieCommands`')."""

    def _actions(self) -> HubActions | None:
        for screen in reversed(self.app.screen_stack):
            if is_loaded_instance(screen, "talkie_tui.ui.chat.screen", "ChatScreen"):
                chat: ChatScreen = screen
                from talkie_tui.ui.chat.hub_actions import HubActions, HubParts

                backend = chat.backend
                return HubActions(chat, backend) if isinstance(backend, HubParts) else None
        return None

    def _available(self) -> list[PaletteCommand]:
        return list(HUB_COMMANDS) if self._actions() is not None else []

    def _run(self, command: PaletteCommand) -> Callable[[], Awaitable[bool]]:
        async def run() -> bool:
            actions = self._actions()
            if actions is None:
                return False
            getattr(actions, command.action)()
            return True

        return run
