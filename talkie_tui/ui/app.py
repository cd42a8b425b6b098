"""TalkieApp: the connect screen, then the chat screen of the chosen server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

import httpx
from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.notifications import SeverityLevel
from textual.screen import Screen

from talkie_tui.backends import is_gateway, is_hub
from talkie_tui.backends.base import Backend, Devices, ProtocolName
from talkie_tui.config import KnownServers, Settings
from talkie_tui.core.lazy import is_loaded_instance
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken, TokenSource
from talkie_tui.core.urls import is_loopback_host
from talkie_tui.i18n import N_, _, choose_language, use_language
from talkie_tui.ui.chat.hub_commands import HubCommands
from talkie_tui.ui.chat.type_ahead import TypeAhead
from talkie_tui.ui.chat.voice import VoiceOptions
from talkie_tui.ui.screens.connect import ConnectFunction, ConnectScreen
from talkie_tui.ui.signin.sign_in_offer import dev_tokens_refused, offer_of
from talkie_tui.ui.support.crash import CrashGuard
from talkie_tui.ui.support.gc_tuning import FREEZE_DELAY, freeze_startup_objects
from talkie_tui.ui.support.native_stderr import native_stderr_to_log
from talkie_tui.ui.support.notify import notify_plain
from talkie_tui.ui.support.palette import TalkieCommands

# Only what every start needs is imported here: a protocol's backend, the sign-in flows and
# the help come when used (issue 24: a Minara session imports no talkie/1, and so on).
if TYPE_CHECKING:
    from talkie_tui.auth.signin import SignOutResult
    from talkie_tui.auth.tokens import OAuthTokens
    from talkie_tui.backends.cuckoo.backend import CuckooBackend
    from talkie_tui.backends.minara.backend import MinaraBackend
    from talkie_tui.backends.talkie import TalkieClient
    from talkie_tui.ui.chat.screen import ChatScreen
    from talkie_tui.ui.signin.hub_signing import HubSignIn
    from talkie_tui.ui.signin.signing import Signer

__all__ = ["TalkieApp"]

STYLES = Path(__file__).parent / "styles"

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


def _stylesheets() -> list[Path]:
    """app.tcss first, then every other stylesheet of the UI in name order."""
    sheets = sorted(STYLES.glob("*.tcss"))
    return sorted(sheets, key=lambda path: path.name != "app.tcss")


def _is_chat(screen: object) -> TypeGuard[ChatScreen]:
    """Whether `screen` is a chat screen, without importing it (the picker never does)."""
    return is_loaded_instance(screen, "talkie_tui.ui.chat.screen", "ChatScreen")


def _import_chat_screen() -> None:
    from talkie_tui.ui.chat import screen as chat  # noqa: F401  # imported now, used when the server answered


# Palette commands the chat screen offers or hides (`ChatScreen.check_action`).
_CHAT_ACTIONS = frozenset(
    {"voice_call", "hang_up", "voice_mode", "choose_model", "attach", "dictate", "reply"}
)
# Palette commands of a hub only (reaching agents: `ui/reach.py`).
_REACH_ACTIONS = frozenset({"add_by_code", "find_agents", "contact", "archived"})


class TalkieApp(CrashGuard):
    """The talkie terminal client."""

    TITLE = "talkie"
    CSS_PATH = _stylesheets()  # type: ignore[assignment]
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
        client: TalkieClient | None = None,
        backend: Backend | None = None,
        connect: ConnectFunction | None = None,
        protocol: ProtocolName | None = None,
        demo: bool = False,
        drafts_file: Path | None = None,
        pair_code: str | None = None,
    ) -> None:
        self.client = client
        # Set first: the stylesheet asks for the server's accent.
        if backend is None and client is not None:
            from talkie_tui.backends.talkie import TalkieBackend

            backend = TalkieBackend(client)
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
        self._signing_in = False  # a sign-in screen is up (or on its way) for the chat
        self._declined: TalkieClient | None = None  # cancelled: do not push the screen again
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
        if _is_chat(screen):
            return True  # mounting: its composer takes the keys once ready
        if isinstance(screen, ConnectScreen):
            return screen.leads_to_chat or not screen.is_mounted
        return screen is self.default_screen

    def on_chat_screen_ready(self, event: ChatScreen.Ready) -> None:
        """The chat's composer is there: the keys typed meanwhile go into it."""
        self.type_ahead.release(event.chat.composer)
        if self._pair_code:
            code, self._pair_code = self._pair_code, None
            event.chat.reach.add_by_code(code)

    def on_mount(self) -> None:
        if self.backend is not None:
            self._show_chat(self.backend)
        else:
            self.push_screen(self._connect_screen(self._address))
            if self._address is not None:
                # Drawn first, the connect screen asks the server; meanwhile (the request is
                # out) the chat screen's code is loaded, so the wait and the import overlap.
                self.call_after_refresh(_import_chat_screen)

    def _connect_screen(self, address: str | None) -> ConnectScreen:
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
        )

    def _signer(self) -> Signer:
        from talkie_tui.ui.signin.signing import Signer

        return Signer(self, self.settings, self.known, self._allow_private_http)

    @on(ConnectScreen.Connected)
    def _connected(self, event: ConnectScreen.Connected) -> None:
        self._address = self._address or event.tokens_for or None  # the tokens' server, kept
        self.client = event.client
        self._show_chat(event.backend)

    def _show_chat(self, backend: Backend) -> None:
        """Open the chat screen on a server, in its language and colours."""
        self.backend = backend
        info = backend.info
        use_language(choose_language(self.settings.language, info.locale))
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
        if isinstance(self.screen, ConnectScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
        if not self.is_headless:
            self.set_timer(FREEZE_DELAY, freeze_startup_objects, name="gc-freeze")

    def _voice_options(self, origin: str) -> VoiceOptions:
        """Audio settings, and the development switch for a provider over plain http."""
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

    def action_new_thread(self) -> None:
        """Start a new thread."""
        if chat := self._chat():
            chat.action_new_thread()

    def action_export_thread(self) -> None:
        """Export the thread to Markdown."""
        if chat := self._chat():
            chat.action_export_thread()

    def action_toggle_sidebar(self) -> None:
        """Show or hide the thread list."""
        if chat := self._chat():
            chat.action_toggle_sidebar()

    def action_voice_call(self) -> None:
        """Start a voice call."""
        if chat := self._chat():
            chat.action_voice_call()

    def action_hang_up(self) -> None:
        """End the voice call."""
        if chat := self._chat():
            chat.action_hang_up()

    def action_voice_mode(self) -> None:
        """Switch the call between push-to-talk and hands-free."""
        if chat := self._chat():
            chat.action_voice_mode()

    def action_choose_model(self) -> None:
        """Choose the model of the thread's next messages."""
        if chat := self._chat():
            chat.action_choose_model()

    def action_attach(self) -> None:
        """Attach a file to the next message."""
        if chat := self._chat():
            chat.action_attach()

    def action_dictate(self) -> None:
        """Start (or stop) dictating the next message."""
        if chat := self._chat():
            chat.action_dictate()

    def action_reply(self) -> None:
        """Answer the message selected in the conversation (where the server takes replies)."""
        if chat := self._chat():
            chat.action_reply()

    def action_devices(self) -> None:
        """Show the devices signed in to this server (where it lists them)."""
        backend = self.backend
        if not isinstance(backend, Devices) or not backend.info.capabilities.devices:
            notify_plain(self, _("This server does not list your devices."), severity="warning")
            return
        from talkie_tui.ui.screens.devices import DevicesScreen  # only when asked for

        if not isinstance(self.screen, DevicesScreen):
            self.push_screen(DevicesScreen(backend, backend.info.name))

    def action_add_by_code(self) -> None:
        """Add a hub agent by the pairing code its owner gave."""
        if chat := self._chat():
            chat.reach.add_by_code()

    def action_find_agents(self) -> None:
        """The hub's catalogue of agents listed publicly."""
        if chat := self._chat():
            chat.reach.find_agents()

    def action_contact(self) -> None:
        """Pin, mute, archive, remove, block or report the agent on screen."""
        if chat := self._chat():
            chat.reach.contact()

    def action_archived(self) -> None:
        """The conversations the person archived."""
        if chat := self._chat():
            chat.reach.archived()

    async def action_switch_server(self) -> None:
        """Go back to the connect screen."""
        await self._disconnect()
        self.switch_screen(self._connect_screen(None))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Sign in and sign out only while connected (sign in where the server offers it)."""
        if action in ("sign_out", "sign_in") and (is_gateway(self.backend) or is_hub(self.backend)):
            return True  # the gateway's token or the hub's session: given again, or forgotten
        if action == "sign_out":
            return self.client is not None
        if action == "devices":
            backend = self.backend
            return isinstance(backend, Devices) and backend.info.capabilities.devices
        if action in _REACH_ACTIONS:
            return is_hub(self.backend)
        if action in _CHAT_ACTIONS:
            chat = self._chat_below()
            return chat is not None and chat.check_action(action, parameters) is True
        if action == "sign_in":
            client = self.client
            if client is None:
                return False
            return offer_of(client.server, self.settings) in (
                "oauth",
                "dev_token",
            )
        return True

    def action_sign_in(self) -> None:
        """Sign in to this server again (in the browser)."""
        if chat := self._chat():
            self._offer_sign_in(chat, "", asked=True)

    def on_chat_screen_sign_in_required(self, event: ChatScreen.SignInRequired) -> None:
        """A server refused the chat's sign-in: offer a new one (once at a time)."""
        event.stop()
        # The chat of the server connected now (the client is talkie/1's; a gateway's or a
        # hub's backend has a wire client of its own, which the app does not hold).
        if _is_chat(event.chat) and event.chat.backend is self.backend:
            self._offer_sign_in(event.chat, event.message, asked=False)

    def _offer_sign_in(self, chat: ChatScreen, message: str, *, asked: bool) -> None:
        """Push the sign-in screen over the chat (the conversation and the draft stay)."""
        if self._signing_in:
            return
        if is_gateway(chat.backend):
            self._signing_in = True
            self.run_worker(
                self._token_again(chat, chat.backend, message),
                group="sign-in",
                exit_on_error=False,
            )
            return
        if is_hub(chat.backend):
            self._signing_in = True
            self.run_worker(
                self._hub_again(chat, chat.backend, message),
                group="sign-in",
                exit_on_error=False,
            )
            return
        client = chat.client
        name = clean_text(client.server.manifest.name)
        offer = offer_of(client.server, self.settings)
        if offer not in ("oauth", "dev_token"):
            advice = dev_tokens_refused(client.server) if offer == "dev_token_off" else ""
            text = _("{name} did not accept the sign-in: {message}").format(
                name=name, message=message
            )
            notify_plain(self, f"{text} {advice}".strip(), severity="error")
            return
        if not asked and self._declined is client:
            # The person said "not now": say what is wrong, but do not push the screen again.
            notify_plain(
                self,
                _("Not signed in to {name}: {message} Sign in with Ctrl+P → Sign in.").format(
                    name=name, message=message
                ),
                severity="warning",
            )
            return
        reason = (
            ""
            if asked
            else _(
                "{name} did not accept your sign-in: {message} Sign in again to go on; "
                "the conversation and what you typed are kept."
            ).format(name=name, message=message)
        )
        self._signing_in = True
        self.run_worker(self._sign_in_again(chat, reason), group="sign-in", exit_on_error=False)

    async def _sign_in_again(self, chat: ChatScreen, reason: str) -> None:
        client = chat.client
        name = clean_text(client.server.manifest.name)
        try:
            tokens = await self._signer().ask(client.server, reason=reason)
        except Exception as error:  # a store that failed: words, never a crash
            message = getattr(error, "message", None) or str(error)
            notify_plain(
                self,
                _("Could not sign in: {error}").format(error=message),
                severity="error",
            )
            return
        finally:
            self._signing_in = False
        if tokens is None:
            self._declined = client
            notify_plain(
                self,
                _("Not signed in to {name}. Sign in later with Ctrl+P → Sign in.").format(
                    name=name
                ),
                severity="warning",
            )
            return
        self._declined = None
        await self._attach_tokens(client, tokens)
        if chat.is_attached:
            chat.signed_in_again()
        notify_plain(
            self,
            _("Signed in to {name} again. What failed meanwhile can be retried.").format(name=name),
        )

    async def _token_again(self, chat: ChatScreen, backend: MinaraBackend, message: str) -> None:
        """Ask for the gateway's token again (it refused the one in use, or the person asked)."""
        name = clean_text(backend.info.name)
        reason = (
            _(
                "{name} did not accept the token: {message} Give it again to go on; the "
                "conversation and what you typed are kept."
            ).format(name=name, message=message)
            if message
            else ""
        )
        from talkie_tui.ui.signin.gateway_sign_in import GatewaySignIn

        signing = GatewaySignIn(self, self.settings, self.known)
        await self._signed_in_again(chat, name, partial(signing.again, backend, reason))

    def _hub_signing(self) -> HubSignIn:
        from talkie_tui.ui.signin.hub_signing import HubSignIn

        return HubSignIn(
            self, self.settings, self.known, allow_private_http=self._allow_private_http
        )

    async def _hub_again(self, chat: ChatScreen, backend: CuckooBackend, message: str) -> None:
        """Sign in to the hub again (it refused the session in use, or the person asked)."""
        name = clean_text(backend.info.name)
        reason = (
            _(
                "{name} did not accept your sign-in: {message} Sign in again to go on; the "
                "conversation and what you typed are kept."
            ).format(name=name, message=message)
            if message
            else ""
        )
        await self._signed_in_again(chat, name, partial(self._hub_signing().again, backend, reason))

    async def _signed_in_again(
        self, chat: ChatScreen, name: str, again: Callable[[], Awaitable[bool]]
    ) -> None:
        """Run a gateway's or a hub's sign-in again (`again`: True when it was taken) and say
        how it went; the chat reloads what needs the new sign-in."""
        try:
            taken = await again()
        except Exception as error:  # a store that failed: words, never a crash
            message = getattr(error, "message", None) or str(error)
            notify_plain(
                self, _("Could not sign in: {error}").format(error=message), severity="error"
            )
            return
        finally:
            self._signing_in = False
        if not taken:
            notify_plain(
                self,
                _("Not signed in to {name}. Sign in later with Ctrl+P → Sign in.").format(
                    name=name
                ),
                severity="warning",
            )
            return
        if chat.is_attached:
            chat.signed_in_again()
        notify_plain(
            self,
            _("Signed in to {name} again. What failed meanwhile can be retried.").format(name=name),
        )

    async def _hub_sign_out(self, backend: CuckooBackend, screen: ConnectScreen) -> None:
        """End the session on the hub, then forget it (the backend is closed already)."""
        try:
            text, ok = await self._hub_signing().sign_out(backend)
        except Exception as error:  # a store that failed: words, never a crash
            message = getattr(error, "message", None) or str(error)
            text, ok = _("Could not sign out: {error}").format(error=message), False
        notify_plain(self, text, severity="information" if ok else "warning")
        if screen.is_attached:
            screen.refresh_known()
            screen.show_status(text, kind="info" if ok else "warning")

    async def _forget_token(self, backend: MinaraBackend) -> None:
        """Sign out of a gateway: its kept token is forgotten everywhere (nothing to revoke)."""
        from talkie_tui.auth.store import ForgetIncomplete, forget_everywhere

        server_id, name = backend.info.server_id, clean_text(backend.info.name)
        try:
            await asyncio.to_thread(forget_everywhere, server_id)
        except ForgetIncomplete as error:
            notify_plain(
                self,
                _("Signed out of {name}, but {error}.").format(name=name, error=error.message),
                severity="error",
            )
            return
        with contextlib.suppress(OSError):
            self.known.set_signed_in(server_id, False)
        notify_plain(self, _("Signed out of {name}: its token is forgotten.").format(name=name))

    @staticmethod
    async def _attach_tokens(client: TalkieClient, tokens: TokenSource) -> None:
        """Give `client` a new token source, closing the old one's connections."""
        old, client.tokens = client.tokens, tokens
        close = getattr(old, "aclose", None)
        if old is not tokens and close is not None:
            with contextlib.suppress(Exception):
                await close()

    async def action_sign_out(self) -> None:
        """Sign out: revoke the sign-in at the server, forget its tokens; back to the list."""
        if is_gateway(self.backend):
            gateway = self.backend
            self._gateway_token = None
            await self._disconnect()
            await self.switch_screen(self._connect_screen(None))
            await self._forget_token(gateway)
            return
        if is_hub(self.backend):
            hub = self.backend
            self._hub_token = None
            await self._disconnect()
            hub_screen = self._connect_screen(None)
            await self.switch_screen(hub_screen)
            hub_screen.show_status(
                _("Signing out of {name}…").format(name=clean_text(hub.info.name)),
                kind="busy",
                busy=True,
            )
            self.run_worker(
                self._hub_sign_out(hub, hub_screen), group="sign-out", exit_on_error=False
            )
            return
        client = self.client
        tokens = client.tokens if client is not None else None
        self._token = None
        await self._disconnect()
        screen = self._connect_screen(None)
        await self.switch_screen(screen)
        if client is None:
            return
        from talkie_tui.auth.tokens import OAuthTokens

        name = clean_text(client.server.manifest.name)
        if isinstance(tokens, OAuthTokens):
            screen.show_status(
                _("Signing out of {name}…").format(name=name), kind="busy", busy=True
            )
            self.run_worker(
                self._sign_out(client.server.server_id, name, tokens, screen),
                group="sign-out",
                exit_on_error=False,
            )
        elif isinstance(tokens, StaticToken):
            notify_plain(self, _("Signed out: the development token is forgotten."))
        else:
            notify_plain(self, _("Signed out."))

    async def _sign_out(
        self, server_id: str, name: str, tokens: OAuthTokens, screen: ConnectScreen
    ) -> None:
        """Revoke, then forget (whatever revocation did), off the event loop: stores may block."""
        from talkie_tui.auth.signin import sign_out
        from talkie_tui.auth.store import TokenStoreError

        allow_private_http = self._allow_private_http

        def run() -> SignOutResult:
            return asyncio.run(
                sign_out(
                    server_id,
                    tokens=tokens,
                    store=tokens.store,
                    allow_private_http=allow_private_http,
                )
            )

        severity: SeverityLevel = "information"
        try:
            result = await asyncio.to_thread(run)
        except TokenStoreError as error:
            text = _("Signed out of {name}, but {error}.").format(name=name, error=error.message)
            severity = "error"
        else:
            text = _("Signed out of {name}. {details}").format(name=name, details=result.describe())
            if result.problem:
                severity = "warning"
        with contextlib.suppress(OSError):
            self.known.set_signed_in(server_id, False)
        notify_plain(self, text, severity=severity)
        if screen.is_attached:
            screen.refresh_known()
            screen.show_status(text, kind="info" if severity == "information" else "warning")

    async def _disconnect(self) -> None:
        if chat := self._chat_below():
            # Before the client closes: the call's final usage report still goes out.
            await chat.end_call(_("You left the server."))
        if self.backend is not None:
            await self.backend.aclose()
        self.client = self.backend = None
        self.refresh_css(animate=False)

    async def on_unmount(self) -> None:
        if self.backend is not None:
            await self.backend.aclose()
