"""TalkieApp: the connect screen, then the chat screen of the chosen server."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.screen import Screen

from talkie_tui.backends.signing import SignInOptions
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.lazy import is_loaded_instance
from talkie_tui.core.urls import is_loopback_host
from talkie_tui.i18n import N_, _, choose_language, use_language
from talkie_tui.ui.chat.hub_commands import HubCommands
from talkie_tui.ui.chat.type_ahead import TypeAhead
from talkie_tui.ui.screens.connect import ConnectFunction, ConnectScreen
from talkie_tui.ui.signin.controller import SignInController
from talkie_tui.ui.support.crash import CrashGuard
from talkie_tui.ui.support.gc_tuning import FREEZE_DELAY, freeze_startup_objects
from talkie_tui.ui.support.native_stderr import native_stderr_to_log
from talkie_tui.ui.support.notify import notify_plain
from talkie_tui.ui.support.palette import TalkieCommands
from talkie_tui.ui.support.stylesheets import screen_stylesheets, startup_stylesheets

# Only what every start needs is imported here: a protocol's sign-in, its screens and
# the help come when used (issue 24: a Minara session imports no talkie/1, and so on).
if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, ProtocolName
    from talkie_tui.ui.chat.screen import ChatScreen
    from talkie_tui.ui.chat.voice import VoiceOptions
    from talkie_tui.ui.screens.joining import JoiningScreen

__all__ = ["TalkieApp"]


# Textual's own English, shown in the palette (its system commands) and the footer (the
# palette key): marked here so the catalogs carry it; `_()` translates it where shown.
TEXTUAL_MESSAGES = (
    N_("palette"),
    N_("Open the command palette"),
    N_("Theme"),
    N_("Change the current theme"),
    N_("Quit"),
    N_("Quit the application as soon as possible"),
    N_("Keys"),
    N_("Hide the keys and widget help panel"),
    N_("Show help for the focused widget and a summary of available keys"),
    N_("Minimize"),
    N_("Minimize the widget and restore to normal size"),
    N_("Maximize"),
    N_("Maximize the focused widget"),
    N_("Screenshot"),
    N_("Save an SVG 'screenshot' of the current screen"),
)


def _is_chat(screen: object) -> TypeGuard[ChatScreen]:
    """Whether `screen` is a chat screen, without importing it (the picker never does)."""
    return is_loaded_instance(screen, "talkie_tui.ui.chat.screen", "ChatScreen")


def _is_joining(screen: object) -> TypeGuard[JoiningScreen]:
    """Whether `screen` is the chat drawn first, without importing it (the picker never does)."""
    return is_loaded_instance(screen, "talkie_tui.ui.screens.joining", "JoiningScreen")


def _lists_devices(backend: Backend | None) -> bool:
    """Whether the server connected to lists the person's devices (none before a connection:
    the backends' parts load with the first one)."""
    if backend is None:
        return False
    from talkie_tui.backends.base import Devices

    return isinstance(backend, Devices) and backend.info.capabilities.devices


def _import_chat_screen() -> None:
    from talkie_tui.ui.chat import screen as chat  # noqa: F401  # imported now, used when the server answered


def _collect_again() -> None:
    """Garbage collection on again (`talkie connect` turns it off while the TUI starts)."""
    gc.enable()


COLLECT_AT_THE_LATEST = 1.0
"""Seconds after the app is mounted when garbage collection is on again in any case."""
FRAME_OUT = 0.01
"""Seconds idle after the chat drawn first, for the frame to be written out."""
SENT_AT_THE_LATEST = 1.0
"""Seconds after which keys typed ahead behind an Enter go into the composer even if that Enter
sent nothing (a message over the server's limit stays in the composer)."""

# Palette commands the chat screen offers or hides (`ChatScreen.check_action`).
_CHAT_ACTIONS = frozenset(
    {"voice_call", "hang_up", "voice_mode", "choose_model", "attach", "dictate", "reply"}
)
# Palette commands of a hub only (reaching agents: `ui/reach.py`).
_REACH_ACTIONS = frozenset({"add_by_code", "find_agents", "contact", "archived"})


def _on_chat(call: Callable[[ChatScreen], object]) -> Callable[[TalkieApp], None]:
    """An action of the app (bindings, the palette) that `call` does on the chat screen, when
    the chat is the screen on top."""

    def action(app: TalkieApp) -> None:
        if chat := app._chat():
            call(chat)

    return action


class TalkieApp(CrashGuard):
    """The talkie terminal client."""

    TITLE = "talkie"
    CSS_PATH = startup_stylesheets()  # type: ignore[assignment]  # the chat brings its own
    COMMANDS = App.COMMANDS | {TalkieCommands, HubCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", N_("Help")),
        Binding("ctrl+q", "quit", N_("Quit"), priority=True),
    ]

    def __init__(
        self,
        address: str | None = None,
        *,
        token: str | None = None,
        gateway_token: str | None = None,
        hub_token: str | None = None,
        thread_id: str | None = None,
        settings: Settings | None = None,
        known: KnownServers | None = None,
        allow_private_http: bool = False,
        backend: Backend | None = None,
        connect: ConnectFunction | None = None,
        protocol: ProtocolName | None = None,
        demo: bool = False,
        drafts_file: Path | None = None,
        pair_code: str | None = None,
    ) -> None:
        self.client: Any = None  # a Talkie server's client, once connected to one
        # Set first: the stylesheet asks for the server's accent.
        self.backend = backend
        super().__init__()
        self.settings = settings or Settings.load()
        self.known = known if known is not None else KnownServers.load()  # an empty list is one
        self._address = address
        self._token = token
        self._gateway_token = gateway_token
        self._hub_token = hub_token
        self._initial_thread_id = thread_id
        self._allow_private_http = allow_private_http or self.settings.allow_private_http
        self._demo = demo  # started by `talkie demo`: its voice provider is on this computer
        self._drafts_file = drafts_file  # None: the state folder's (a demo keeps its own)
        self._pair_code = pair_code  # `--pair`: a hub agent to add once the chat is up
        self._connect_fn = connect
        self._protocol = protocol  # `--protocol`: what the connect screen must speak
        options = SignInOptions(self.settings, self.known, self._allow_private_http)
        self.signing = SignInController(self, options)
        # Straight into a chat (an address, or a backend): keys typed meanwhile are its.
        self.type_ahead = TypeAhead(active=address is not None or self.backend is not None)
        if self.settings.theme:
            self.theme = self.settings.theme
        use_language(choose_language(self.settings.language, None))

    def run(self, **options: Any) -> Any:
        """Run the app in the terminal (`talkie connect`, `talkie demo`).

        Meanwhile what native libraries (ALSA, PortAudio, libav) write to fd 2 goes to the
        debug log instead of over the screen.
        """
        with native_stderr_to_log():
            return super().run(**options)

    def get_css_variables(self) -> dict[str, str]:
        """Theme variables plus `$server-accent`, the connected server's brand colour."""
        variables = super().get_css_variables()
        accent = self.backend.info.accent if self.backend else None
        variables["server-accent"] = accent or variables.get("accent", "#0178d4")
        return variables

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's palette commands (theme, keys, screenshot…) in the UI's language."""
        for command in super().get_system_commands(screen):
            yield command._replace(title=_(command.title), help=_(command.help))

    def action_command_palette(self) -> None:
        """Show the command palette (Textual's, with its search prompt in the UI's language)."""
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(
                CommandPalette(placeholder=_("Search for commands…"), id="--command-palette")
            )

    async def on_event(self, event: events.Event) -> None:
        """Keys typed before the chat's composer exists are kept for it (`TypeAhead`)."""
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and self._screen_passing_by()
            and self.type_ahead.hold(event)
        ):
            return
        await super().on_event(event)

    def _screen_passing_by(self) -> bool:
        """True while the screen on top only leads to a chat: nothing there takes typing."""
        if not self.type_ahead.waiting:
            return False
        if not self.screen_stack:
            return True  # the first frame is not drawn yet
        screen = self.screen
        if _is_chat(screen) or _is_joining(screen):
            return True  # mounting, or drawn ahead: the composer takes the keys once ready
        if isinstance(screen, ConnectScreen):
            return screen.leads_to_chat or not screen.is_mounted
        return screen is self.default_screen

    def on_chat_screen_ready(self, event: ChatScreen.Ready) -> None:
        """The chat's composer is there: the keys typed meanwhile go into it."""
        self.type_ahead.release(event.chat.composer)
        self._follow_the_message()
        if self._pair_code:
            code, self._pair_code = self._pair_code, None
            event.chat.reach.add_by_code(code)

    def on_composer_submitted(self) -> None:
        """A message left the composer (the chat has handled it): what was typed after its
        Enter goes into the composer now."""
        self.type_ahead.sent()
        self._follow_the_message()

    def _follow_the_message(self) -> None:
        if self.type_ahead.waiting:  # keys typed after an Enter: they follow its message
            self.set_timer(SENT_AT_THE_LATEST, self.type_ahead.flush)

    def on_mount(self) -> None:
        self.set_timer(COLLECT_AT_THE_LATEST, _collect_again)
        if self.backend is not None:
            self._show_chat(self.backend)
        else:
            address = self._address
            entry = self.known.find(address) if address is not None else None
            if address is not None and entry is not None:
                # Draw first, fetch after (issue 24): a known server's chat at once, from the
                # known-servers file, over the connect screen that reaches the server once
                # that chat is out (`on_joining_screen_drawn`).
                from talkie_tui.ui.screens.joining import JoiningScreen

                self.push_screen(self._connect_screen(None, behind=True))
                joining = JoiningScreen(entry.label, address, self.type_ahead)
                self.push_screen(joining, self._stopped_joining)
                return  # collection comes back with that chat's frame (`_reach_the_server`)
            self.push_screen(self._connect_screen(address))
            if address is not None:
                # Drawn first, the connect screen asks the server; meanwhile (the request is
                # out) the chat screen's code is loaded, so the wait and the import overlap.
                self.call_after_refresh(_import_chat_screen)
        self.call_after_refresh(self.set_timer, FRAME_OUT, _collect_again)

    def _connect_screen(self, address: str | None, *, behind: bool = False) -> ConnectScreen:
        return ConnectScreen(
            address,
            token=self._token,
            gateway_token=self._gateway_token,
            hub_token=self._hub_token,
            known=self.known,
            allow_private_http=self._allow_private_http,
            connect=self._connect_fn,
            protocol=self._protocol,
            settings=self.settings,
            tokens_belong_to=self._address,
            behind=behind,
        )

    def on_joining_screen_drawn(self) -> None:
        """The chat drawn first is out: the connect screen under it asks the server now.

        A moment later: reaching a server first loads its protocol's code, and pydantic
        builds its validators without letting Textual's writer thread run, so the frame would
        reach the terminal only after that."""
        self.set_timer(FRAME_OUT, self._reach_the_server)

    async def _reach_the_server(self) -> None:
        _collect_again()
        below = self.screen_stack[-2] if len(self.screen_stack) > 1 else None
        if _is_joining(self.screen) and isinstance(below, ConnectScreen):
            await below.build()  # made now, after the first frame, out of sight
            if not _is_joining(self.screen):
                return  # stopped meanwhile (Esc)
            address = self._address or ""
            below.address_input.value = address
            below.start_connect(address)
            # While the request is out, the chat screen's code loads.
            self.call_after_refresh(_import_chat_screen)

    async def _stopped_joining(self, stop: bool | None) -> None:
        """Esc on the chat drawn ahead: the attempt stops, the connect screen shows."""
        if stop and isinstance(self.screen, ConnectScreen):
            await self.screen.build()
            self.screen.address_input.value = self._address or ""  # asked or not yet
            self.screen.action_stop()

    @on(ConnectScreen.Failed)
    def _failed(self) -> None:
        """The chat drawn ahead gives way to the connect screen, which says what failed."""
        if _is_joining(self.screen):
            self.pop_screen()

    @on(ConnectScreen.Connected)
    def _connected(self, event: ConnectScreen.Connected) -> None:
        self._address = self._address or event.tokens_for or None  # the tokens' server, kept
        self.client = event.client
        self.signing.use(event.sign_in)
        self._show_chat(event.backend)

    def _show_chat(self, backend: Backend) -> None:
        """Open the chat screen on a server, in its language and colours."""
        self.backend = backend
        info = backend.info
        use_language(choose_language(self.settings.language, info.locale))
        self._add_screen_stylesheets()
        self.refresh_css(animate=False)
        self.sub_title = info.name
        from talkie_tui.ui.chat.screen import ChatScreen

        screen = ChatScreen(
            backend,
            thread_id=self._initial_thread_id,
            downloads_dir=self.settings.downloads_dir,
            show_sidebar=self.settings.show_sidebar,
            newline_key=self.settings.newline_key,
            voice=self._voice_options(info.origin),
            drafts_file=self._drafts_file,
        )
        self._initial_thread_id = None
        if _is_joining(self.screen):
            self.pop_screen()  # the chat takes the place of the one drawn ahead
        if isinstance(self.screen, ConnectScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
        if not self.is_headless:
            self.set_timer(FREEZE_DELAY, freeze_startup_objects, name="gc-freeze")

    def _add_screen_stylesheets(self) -> None:
        """The sheets of the screens that may show before a chat, parsed with the refresh the
        chat needs anyway: a screen over the chat then shows without a parse of its own."""
        for path in screen_stylesheets():
            if not self.stylesheet.has_source(str(path)):
                self.stylesheet.read(path)

    def _voice_options(self, origin: str) -> VoiceOptions:
        """Audio settings, and the development switch for a provider over plain http."""
        import httpx  # loaded by the connection already; the picker starts without it

        from talkie_tui.ui.chat.voice import VoiceOptions  # with the chat screen

        settings = self.settings
        on_this_computer = is_loopback_host(httpx.URL(origin).host)
        return VoiceOptions(
            input_device=settings.audio_input,
            output_device=settings.audio_output,
            half_duplex=settings.half_duplex,
            allow_http_signaling=self._allow_private_http or (self._demo and on_this_computer),
        )

    def _chat(self) -> ChatScreen | None:
        return self.screen if _is_chat(self.screen) else None

    def _chat_below(self) -> ChatScreen | None:
        """The chat screen, also under a modal (help, the palette, a confirmation)."""
        for screen in reversed(self.screen_stack):
            if _is_chat(screen):
                return screen
        return None

    # --- actions (bindings and the command palette) --------------------------------------

    def action_help(self) -> None:
        """Show every key binding."""
        from talkie_tui.ui.screens.help import HelpScreen  # only when asked for

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(newline_key=self.settings.newline_key))

    action_new_thread = _on_chat(lambda chat: chat.action_new_thread())
    action_export_thread = _on_chat(lambda chat: chat.action_export_thread())
    action_toggle_sidebar = _on_chat(lambda chat: chat.action_toggle_sidebar())
    action_voice_call = _on_chat(lambda chat: chat.action_voice_call())
    action_hang_up = _on_chat(lambda chat: chat.action_hang_up())
    action_voice_mode = _on_chat(lambda chat: chat.action_voice_mode())
    action_choose_model = _on_chat(lambda chat: chat.action_choose_model())
    action_attach = _on_chat(lambda chat: chat.action_attach())
    action_dictate = _on_chat(lambda chat: chat.action_dictate())
    action_reply = _on_chat(lambda chat: chat.action_reply())
    # A hub's agents (`ui/chat/reach.py`).
    action_add_by_code = _on_chat(lambda chat: chat.reach.add_by_code())
    action_find_agents = _on_chat(lambda chat: chat.reach.find_agents())
    action_contact = _on_chat(lambda chat: chat.reach.contact())
    action_archived = _on_chat(lambda chat: chat.reach.archived())

    def action_devices(self) -> None:
        """Show the devices signed in to this server (where it lists them)."""
        from talkie_tui.backends.base import Devices  # loaded by a connection, or now

        backend = self.backend
        if not isinstance(backend, Devices) or not backend.info.capabilities.devices:
            notify_plain(self, _("This server does not list your devices."), severity="warning")
            return
        from talkie_tui.ui.screens.devices import DevicesScreen  # only when asked for

        if not isinstance(self.screen, DevicesScreen):
            self.push_screen(DevicesScreen(backend, backend.info.name))

    async def action_switch_server(self) -> None:
        """Go back to the connect screen."""
        await self._disconnect()
        self.switch_screen(self._connect_screen(None))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Sign in and sign out only while connected (sign in where the server offers it)."""
        if action in ("sign_in", "sign_out"):
            return self.signing.allows(action, self.backend)
        if action == "devices":
            return _lists_devices(self.backend)
        if action in _REACH_ACTIONS:
            chat = self._chat_below()
            return chat is not None and chat.reach.offered
        if action in _CHAT_ACTIONS:
            chat = self._chat_below()
            return chat is not None and chat.check_action(action, parameters) is True
        return True

    def action_sign_in(self) -> None:
        """Sign in to this server again."""
        if chat := self._chat():
            self.signing.offer(chat, "", asked=True)

    def on_chat_screen_sign_in_required(self, event: ChatScreen.SignInRequired) -> None:
        """A server refused the chat's sign-in: offer a new one (once at a time)."""
        event.stop()
        if _is_chat(event.chat) and event.chat.backend is self.backend:
            self.signing.offer(event.chat, event.message, asked=False)

    async def action_sign_out(self) -> None:
        """Sign out: end the sign-in at the server, forget it; back to the list."""
        backend, sign_in = self.backend, self.signing.of(self.backend)
        # The command line's tokens are not used again for the server signed out of.
        self._token = self._gateway_token = self._hub_token = None
        await self._disconnect()
        screen = self._connect_screen(None)
        await self.switch_screen(screen)
        if backend is not None and sign_in is not None:
            self.signing.sign_out(backend, sign_in, screen)

    async def _disconnect(self) -> None:
        if chat := self._chat_below():
            # Before the client closes: the call's final usage report still goes out.
            await chat.end_call(_("You left the server."))
        if self.backend is not None:
            await self.backend.aclose()
        self.client = self.backend = None
        self.signing.use(None)
        self.refresh_css(animate=False)

    async def on_unmount(self) -> None:
        if self.backend is not None:
            await self.backend.aclose()
