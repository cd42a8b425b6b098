"""F1 help: the keys that work here, read from the BINDINGS of the app and the screen below.

Each key is listed once, in the group of its context (the screen, the widgets on it, the
decisions on screen, everywhere); a binding the screen does not allow now (`check_action` says
False: voice on a server without calls, a second meaning of Esc) is left out, and so are the
notes about what this server does not offer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.keys import format_key
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from talkie_tui.i18n import N_, _
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.support.stylesheets import own_stylesheet

if TYPE_CHECKING:
    from talkie_tui.backends.backend import Backend

__all__ = ["HelpGroup", "HelpScreen", "collect_help", "describe_key"]

_KEY_NAMES = {
    "escape": "Esc",
    "enter": "Enter",
    "delete": "Del",
    "backspace": "Backspace",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "home": "Home",
    "end": "End",
    "tab": "Tab",
    "space": "Space",
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
}
_OWN_PACKAGE = "talkie_tui"


def describe_key(key: str) -> str:
    """A key as people write it: "ctrl+p" -> "Ctrl+P", "question_mark" -> "?", "f1" -> "F1"."""
    *modifiers, name = key.split("+")
    shown = _KEY_NAMES.get(name) or format_key(name)
    if len(shown) > 1:
        shown = shown.upper() if shown[0] == "f" and shown[1:].isdigit() else shown.capitalize()
    elif modifiers:
        shown = shown.upper()
    return "+".join([*(m.capitalize() for m in modifiers), shown])


_ACTION_NAMES = {"command_palette": N_("Command palette")}
# Descriptions Textual gives its own bindings (Screen, App): marked here so the catalog has
# them, and help and the footer show them in the UI's language like talkie's own.
_TEXTUAL_DESCRIPTIONS = (N_("Focus Next"), N_("Focus Previous"), N_("Copy selected text"))


def _describe_action(binding: Binding) -> str:
    action = binding.action.rpartition(".")[2]
    if action in _ACTION_NAMES:
        return _(_ACTION_NAMES[action])
    if binding.description:
        description = _(binding.description)
        return description[0].upper() + description[1:]
    # No description: the action name still says what the key does.
    return action.replace("_", " ").capitalize()


@dataclass
class HelpGroup:
    """A titled list of (keys, what they do) rows."""

    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)

    def add(self, bindings: Iterable[Binding]) -> None:
        """Add bindings, folding several keys for the same action into one row."""
        by_action: dict[tuple[str, str], list[str]] = {}
        for binding in bindings:
            if binding.system and not binding.description:
                continue  # e.g. ctrl+c "help_quit": an internal nudge, not a feature
            keys = by_action.setdefault((binding.action, _describe_action(binding)), [])
            shown = binding.key_display or describe_key(binding.key)
            if shown not in keys:
                keys.append(shown)
        existing = {what for _keys, what in self.rows}
        for (_action, what), keys in by_action.items():
            if what not in existing:
                self.rows.append((", ".join(keys), what))


def _textual_bindings(cls: type) -> set[tuple[str, str]]:
    """(key, action) of the bindings Textual's own classes give `cls` (focus, copy, scroll)."""
    found: set[tuple[str, str]] = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("textual."):
            for binding in Binding.make_bindings(klass.__dict__.get("BINDINGS", ())):
                found.add((binding.key, binding.action))
    return found


def _own_bindings(cls: type) -> list[Binding]:
    """Bindings declared by talkie classes in the MRO of `cls`, base classes last."""
    bindings: list[Binding] = []
    for klass in cls.__mro__:
        if klass.__module__.startswith(_OWN_PACKAGE):
            bindings.extend(Binding.make_bindings(klass.__dict__.get("BINDINGS", ())))
    return bindings


def _group_title(node: DOMNode) -> str:
    title = getattr(node, "HELP_GROUP", None)
    if isinstance(title, str) and title:
        return _(title)
    name = type(node).__name__
    # "ChatScreen" -> "Chat screen"
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in name).strip()
    return words[:1].upper() + words[1:]


def _node_bindings(node: DOMNode) -> list[Binding]:
    # `_bindings` is the merged map Textual itself dispatches from (BINDINGS of the whole MRO
    # plus keys added at run time, such as the command palette's), so help cannot go stale.
    return [binding for _key, binding in node._bindings]


def _works_here(node: DOMNode, binding: Binding) -> bool:
    """False for a binding `node` does not allow now (its `check_action` says False)."""
    action, _rest, _args = binding.action.partition("(")
    if "." in action:
        return True  # another namespace's action (app.*): it decides for itself
    return node.check_action(action, ()) is not False


def collect_help(app: App[object], screen: Screen[object] | None) -> list[HelpGroup]:
    """The help groups: the screen, its talkie widgets (one group per context), then keys
    that work everywhere; each key once, and only the keys that work here."""
    groups: dict[str, HelpGroup] = {}
    everywhere = HelpGroup(_("Everywhere"))
    if screen is not None:
        generic = _textual_bindings(type(screen))
        screen_group = groups.setdefault(_group_title(screen), HelpGroup(_group_title(screen)))
        bindings = [b for b in _node_bindings(screen) if _works_here(screen, b)]
        screen_group.add(b for b in bindings if (b.key, b.action) not in generic)
        everywhere.add(b for b in bindings if (b.key, b.action) in generic)
        seen: set[type] = set()
        for widget in screen.walk_children(with_self=False):
            cls = type(widget)
            if cls in seen or not cls.__module__.startswith(_OWN_PACKAGE):
                continue
            seen.add(cls)
            title = _group_title(widget)
            group = groups.setdefault(title, HelpGroup(title))
            group.add(b for b in _own_bindings(cls) if _works_here(widget, b))
    everywhere.add(_node_bindings(app))
    shown = [*groups.values(), everywhere]
    return _once_each(group for group in shown if group.rows)


def _once_each(groups: Iterable[HelpGroup]) -> list[HelpGroup]:
    """Drop a (keys, what) row a group before already has: each key is explained once."""
    said: set[tuple[str, str]] = set()
    kept: list[HelpGroup] = []
    for group in groups:
        group.rows = [row for row in group.rows if row not in said]
        said.update(group.rows)
        if group.rows:
            kept.append(group)
    return kept


def _voice_note() -> str:
    from talkie_tui.ui.chat.voice import BARGE_IN_KEY, CALL_KEY, MODE_KEY, TALK_KEYS

    call, mode, interrupt = (describe_key(k) for k in (CALL_KEY, MODE_KEY, BARGE_IN_KEY))
    talk, *other = (describe_key(k) for k in TALK_KEYS.split(","))
    also = _(" (or {keys})").format(keys=", ".join(other)) if other else ""
    return _(
        "Where the server offers voice, {call} starts a call and hangs up. Terminals report "
        "no key release, so push-to-talk is a toggle: {talk}{also} starts talking, {talk} "
        "again sends. {mode} switches hands-free on and off, {interrupt} interrupts the "
        "assistant. An action is confirmed by voice only after it was read out; its buttons "
        "work too."
    ).format(call=call, talk=talk, also=also, mode=mode, interrupt=interrupt)


@runtime_checkable
class _AboutAServer(Protocol):
    """A screen about one server (the chat screen): what it offers shapes the help."""

    @property
    def backend(self) -> Backend:
        """The server's backend."""
        ...


class HelpScreen(LocalizedBindings[None], ModalScreen[None]):
    """Every binding of the app and the current screen, grouped, plus a few fixed notes."""

    CSS_PATH = own_stylesheet("help")  # type: ignore[assignment]  # loaded when first shown

    HELP_GROUP = N_("Help")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,f1,q", "close", N_("Close help")),
    ]

    def __init__(
        self,
        screen: Screen[object] | None = None,
        *,
        newline_key: str = "ctrl+j",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._described = screen
        self.newline_key = newline_key

    def notes(self) -> HelpGroup:
        """The fixed lines: what no binding says (about what this server offers)."""
        below = self._screen_below()
        backend = below.backend if isinstance(below, _AboutAServer) else None
        capabilities = backend.info.capabilities if backend is not None else None
        rows = [
            (describe_key(self.newline_key), _("New line in the message you are writing.")),
            ("Enter", _("Sends the message; in a list, opens the highlighted entry.")),
            (
                _("Links"),
                _(
                    "Show their address and open in your browser only when you click them "
                    "or press Enter on them, and only https: addresses or this server's own "
                    "pages."
                ),
            ),
        ]
        if (
            capabilities is None
            or capabilities.actions
            or capabilities.questions
            or (capabilities.buttons)
        ):
            rows.append(
                (
                    _("Decisions"),
                    _(
                        "What the agent proposes or asks waits for you: nothing takes the "
                        "keyboard. Ctrl+O goes to it; ↑ ↓ move, Enter picks, y or n on an "
                        "action, Esc goes back to your message. Keys pressed just before it "
                        "appears are ignored; a risky choice asks once more."
                    ),
                )
            )
        if capabilities is None or capabilities.voice:
            rows.append((_("Voice"), _voice_note()))
        rows.append(("↑ ↓ PgUp PgDn", _("Move in lists and in the conversation.")))
        return HelpGroup(_("Good to know"), rows)

    def _screen_below(self) -> Screen[object] | None:
        if self._described is not None:
            return self._described
        below = [screen for screen in self.app.screen_stack if screen is not self]
        return below[-1] if below else None

    def compose(self) -> ComposeResult:
        """A box with a title, the scrollable list of keys, and how to close it."""
        groups = [*collect_help(self.app, self._screen_below()), self.notes()]
        with Vertical(id="help-box"):
            yield Static(Content(_("Keys and help")), id="help-title")
            with VerticalScroll(id="help-scroll"):
                for group in groups:
                    # Plain Content throughout: descriptions may one day quote server text.
                    yield Static(Content(group.title), classes="help-group")
                    for keys, what in group.rows:
                        with Horizontal(classes="help-row"):
                            yield Static(Content(keys), classes="help-key")
                            yield Static(Content(what), classes="help-what")
            yield Static(Content(_("Esc, F1 or q closes this help.")), id="help-footer")

    def on_mount(self) -> None:
        """Focus the scroll area so the arrow keys scroll it."""
        self.query_one("#help-scroll").focus()

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
