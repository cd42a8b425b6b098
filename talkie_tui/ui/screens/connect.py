"""The connect screen: type an address or pick a known server; discovery runs in a worker.

It finds out what the server speaks with `backends.signing.reach`: a Talkie manifest first,
else a Minara gateway, else a Cuckoo hub (`--protocol` forces one; a known server keeps its
own). Each protocol's sign-in (`backends/<protocol>/sign_in.py`) signs in on the way: the token
given on the command line, else the kept sign-in, else it asks the person through the screens
of `ui.signin.prompts`, and says how it goes on this screen's status line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from talkie_tui import backends
from talkie_tui.auth.grants import TokenStoreError
from talkie_tui.auth.store import MemoryStore
from talkie_tui.backends.signing import SignIn, SignInFailed, SignInOptions, reach
from talkie_tui.config import KnownServer, KnownServers, Settings, load_logo, logo_path
from talkie_tui.core.errors import TalkieError, TransportError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import N_, _
from talkie_tui.ui.signin.prompts import ScreenPrompts
from talkie_tui.ui.support.localized import LocalizedBindings
from talkie_tui.ui.widgets.logo import LogoView
from talkie_tui.ui.widgets.split_row import SplitRow, one_line

# The backends' parts come with the first connection, the confirmation with its question: the
# picker draws without them (issue 24).
if TYPE_CHECKING:
    from talkie_tui.backends.base import Backend, ProtocolName

__all__ = ["ConnectFunction", "ConnectScreen"]

ConnectFunction = Callable[..., Awaitable[Any]]
"""How a Talkie server is discovered: `(address, *, tokens, allow_private_http,
accepted_origins) -> TalkieClient` (tests give a fixed server's)."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_SPIN_SECONDS = 0.08
_HINTS = {
    TransportError: N_("Check the address and your network connection."),
    TalkieError: N_("Check the address, or ask the server's operator."),
}


def _hint_for(error: TalkieError) -> str:
    for kind, hint in _HINTS.items():
        if isinstance(error, kind):
            return _(hint)
    return ""


def _place(address: str) -> str:
    """The origin an address names (`crm.example.com` is https), to tell two apart.

    Read by the standard library, not httpx (`origin_of`): the screen is made before the
    first frame, and httpx takes a tenth of a second to load (issue 24). Both sides of a
    comparison are read here, so they agree."""
    text = address.strip()
    try:
        parts = urlsplit(text if "://" in text else f"https://{text}")
        host, port = parts.hostname or "", parts.port
    except ValueError:
        return text
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    scheme = parts.scheme.lower()
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def _known_row(entry: KnownServer, *, token_given: bool = False) -> SplitRow:
    # The file is the user's own, but names came from servers: clean them once more.
    name = one_line(clean_text(entry.label)) or entry.server_id
    address = one_line(clean_text(entry.address))
    # A server without a name of its own is named by its address ("Cuckoo hub · host:port"):
    # the address is said once.
    shown_address = "" if address and name.endswith(address) else address
    left = Content.assemble(
        (name, "bold"), "  " if shown_address else "", (shown_address, "$text-muted")
    )
    # servers.json records lasting sign-ins; one kept for this session only is asked for.
    signed_in = token_given or entry.signed_in or MemoryStore().load(entry.server_id) is not None
    return SplitRow(left, _("signed in") if signed_in else _("not signed in"))


class ConnectScreen(LocalizedBindings[None], Screen[None]):
    """Address input, known servers, and a status line; posts `Connected` on success."""

    HELP_GROUP = N_("Connect screen")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("delete", "forget", N_("Forget the highlighted server")),
        Binding("escape", "stop", N_("Stop connecting")),
    ]
    # A short terminal gets a smaller logo (connect.tcss), to leave room for the list.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012 (Textual reads it so)

    class Connected(Message):
        """Connected and signed in (a Talkie server's foreign endpoints accepted): here is
        the server's backend, and the sign-in that signs in to it again and out of it."""

        def __init__(
            self, backend: Backend, tokens_for: str = "", sign_in: SignIn | None = None
        ) -> None:
            super().__init__()
            self.backend = backend
            self.tokens_for = tokens_for  # where the command line's tokens belong ("" none)
            self.sign_in = sign_in

        @property
        def client(self) -> Any:
            """The talkie/1 client, for a Talkie server (None for the others)."""
            return self.backend.client if backends.is_talkie(self.backend) else None

    class Failed(Message):
        """An attempt ended without a chat: the status line says why (a chat drawn before
        the server answered gives way to it)."""

    def __init__(
        self,
        address: str | None = None,
        *,
        token: str | None,
        gateway_token: str | None = None,
        hub_token: str | None = None,
        known: KnownServers,
        allow_private_http: bool,
        connect: ConnectFunction | None = None,
        protocol: ProtocolName | None = None,
        settings: Settings | None = None,
        tokens_belong_to: str | None = None,
        behind: bool = False,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.initial_address = address
        # The tokens of the command line (--token, $MINARA_TOKEN, $CUCKOO_TOKEN) are for the
        # server it named, and go nowhere else: a server picked later is signed in on its own.
        self._given = (token, gateway_token or token, hub_token)
        # No address given: they are for the first server connected to.
        place = tokens_belong_to or address
        self._tokens_place = _place(place) if place and any(self._given) else ""
        self.token: str | None = None
        self.gateway_token: str | None = None
        self.hub_token: str | None = None
        self._use_tokens_for(address or "")
        self.known = known
        self.allow_private_http = allow_private_http
        self.settings = settings or Settings()
        self._connect_fn = connect  # None: talkie/1's own discovery
        self.protocol = protocol
        """What `--protocol` forces (None: found out, or what a known server speaks)."""
        self._worker: Worker[None] | None = None
        self._spinner_timer: Timer | None = None
        self._spin = 0
        self._entries: dict[str, KnownServer] = {}
        self._status_kind = "info"
        self._connected = False
        # Made behind the chat drawn first, its widgets wait until after that frame (issue 24).
        self._behind = behind
        self._building: asyncio.Task[None] | None = None

    # --- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        """Logo slot, title, address, status, known servers, key hints (made behind the chat
        drawn first: only their box, until `build`)."""
        with Vertical(id="connect-box"):
            if not self._behind:
                yield from self._parts()

    def _parts(self) -> list[Widget]:
        return [
            # The highlighted known server's brand logo, from the cache the chat screen fills.
            Vertical(LogoView(None, id="connect-logo-view"), id="connect-logo"),
            Static(Content("talkie"), id="connect-title"),
            Static(
                Content(_("Connect to a Talkie server, a Minara gateway or a Cuckoo hub")),
                id="connect-subtitle",
            ),
            Input(
                value=self.initial_address or "",
                placeholder=_("crm.example.com, or a full https:// address"),
                id="connect-address",
            ),
            Horizontal(
                Static(Content(""), id="connect-spinner"),
                Static(Content(""), id="connect-status"),
                id="connect-status-row",
            ),
            Static(Content(_("Known servers")), id="known-title"),
            OptionList(markup=False, id="known-servers"),
            Static(
                Content(_("Enter connects · Del forgets · Tab moves · F1 help")),
                id="connect-hints",
            ),
        ]

    async def build(self) -> None:
        """Make the screen's widgets now, if it was made behind the chat drawn first (every
        call waits for the same ones)."""
        if not self._behind:
            return
        if self._building is None:
            self._building = asyncio.create_task(self._build_parts())
        await self._building

    async def _build_parts(self) -> None:
        await self.query_one("#connect-box", Vertical).mount_all(self._parts())
        self._ready()

    @property
    def logo_slot(self) -> Vertical:
        """The container where a `LogoView` of the server's brand logo may be mounted."""
        return self.query_one("#connect-logo", Vertical)

    @property
    def address_input(self) -> Input:
        """The address box."""
        return self.query_one("#connect-address", Input)

    @property
    def known_list(self) -> OptionList:
        """The list of known servers."""
        return self.query_one("#known-servers", OptionList)

    @property
    def status_text(self) -> str:
        """What the status line says now (plain text; for tests and screen readers)."""
        return str(self.query_one("#connect-status", Static).content)

    @property
    def leads_to_chat(self) -> bool:
        """True while an attempt runs or has just succeeded: the chat comes next, and keys
        typed meanwhile are its (not the address box's)."""
        return self._status_kind == "busy" or self._connected

    @property
    def busy(self) -> bool:
        """True while a discovery is running."""
        return self._worker is not None and self._worker.is_running

    def on_mount(self) -> None:
        """Fill the known servers; start at once when an address was given."""
        if not self._behind:
            self._ready()

    def _ready(self) -> None:
        self._refresh_known()
        if self.known.warnings:
            self._set_status(" ".join(self.known.warnings), kind="warning")
        if self._entries and not self.initial_address:
            self.known_list.focus()  # the most recent server is one Enter away
        else:
            self.address_input.focus()
        if self.initial_address:
            self.start_connect(self.initial_address)

    def refresh_known(self) -> None:
        """Show the known servers (and their sign-in state) as they are now."""
        self._refresh_known()

    def _refresh_known(self) -> None:
        known_list = self.known_list
        keep = known_list.highlighted_option.id if known_list.highlighted_option else None
        entries = self.known.all()
        self._entries = {entry.server_id: entry for entry in entries}
        has_logos = any(logo_path(entry.server_id).is_file() for entry in entries)
        self.logo_slot.set_class(not has_logos, "-empty")
        options = [
            Option(
                _known_row(entry, token_given=self._tokens_given_for(entry.address)),
                id=entry.server_id,
            )
            for entry in entries
        ]
        if not options:
            options = [Option(Content(_("None yet: type an address above.")), disabled=True)]
        known_list.set_options(options)
        known_list.highlighted = 0 if entries else None
        if keep in self._entries:
            known_list.highlighted = known_list.get_option_index(keep)

    # --- status line -------------------------------------------------------------------

    def show_status(self, text: str, *, kind: str = "info", busy: bool = False) -> None:
        """Say something on the status line (kind: info, error, warning or busy)."""
        self._set_status(text, kind=kind, busy=busy)

    def _set_status(self, text: str, *, kind: str = "info", busy: bool = False) -> None:
        self._status_kind = kind
        status = self.query_one("#connect-status", Static)
        status.update(Content(text))
        for name in ("info", "error", "warning", "busy"):
            status.set_class(name == kind, f"-{name}")
        spinner = self.query_one("#connect-spinner", Static)
        spinner.display = busy
        if busy:
            if self._spinner_timer is None:
                self._spinner_timer = self.set_interval(_SPIN_SECONDS, self._advance_spinner)
            self._spinner_timer.resume()
            self._advance_spinner()
        elif self._spinner_timer is not None:
            self._spinner_timer.pause()

    def _advance_spinner(self) -> None:
        self._spin = (self._spin + 1) % len(_SPINNER)
        self.query_one("#connect-spinner", Static).update(Content(_SPINNER[self._spin]))

    def _show_error(self, error: BaseException) -> None:
        if isinstance(error, TalkieError):
            parts = [error.message, f"{_hint_for(error)} {error.retry_hint}".strip()]
        elif isinstance(error, TokenStoreError):
            parts = [
                _("The sign-in could not be read or kept: {error}.").format(error=error.message)
            ]
        else:
            # A bug, not a server problem: say so rather than pretend to know the cause.
            parts = [
                _("Something unexpected went wrong: {kind}: {error}").format(
                    kind=type(error).__name__, error=error
                ),
                _("This is a bug in talkie; please report it."),
            ]
        self._set_status("✗ " + "\n".join(p for p in parts if p), kind="error")

    # --- connecting --------------------------------------------------------------------

    def start_connect(self, address: str) -> None:
        """Discover the server at `address` in a worker (a running attempt is replaced)."""
        address = address.strip()
        if not address:
            self._set_status(
                _("Type the address of a server, such as crm.example.com."), kind="error"
            )
            self.address_input.focus()
            return
        self._set_status(
            _("Looking for a server at {address}…").format(address=address),
            kind="busy",
            busy=True,
        )
        self._worker = self.run_worker(
            self._connect(address), group="connect", exclusive=True, exit_on_error=False
        )

    def _protocol_for(self, address: str) -> ProtocolName | None:
        """The protocol forced, else the one a known server at `address` speaks."""
        if self.protocol is not None:
            return self.protocol
        entry = self.known.find(address)
        if entry is not None and entry.protocol in ("minara", "cuckoo"):
            return "minara" if entry.protocol == "minara" else "cuckoo"
        return None

    def _tokens_given_for(self, address: str) -> bool:
        """True when the command line's tokens are for the server at `address`."""
        return bool(self._tokens_place) and _place(address) == self._tokens_place

    def _use_tokens_for(self, address: str) -> None:
        """Sign in to `address` with the command line's tokens only if they are its (with no
        address on the command line, they are the first one's tried)."""
        if not self._tokens_place and any(self._given) and address.strip():
            self._tokens_place = _place(address)
        given = self._given if self._tokens_given_for(address) else (None, None, None)
        self.token, self.gateway_token, self.hub_token = given

    async def _connect(self, address: str) -> None:
        self._use_tokens_for(address)
        options = SignInOptions(
            self.settings,
            self.known,
            allow_private_http=self.allow_private_http,
            given={"talkie": self.token, "minara": self.gateway_token, "cuckoo": self.hub_token},
            discover=self._connect_fn,
        )
        try:
            reached = await reach(
                address,
                protocol=self._protocol_for(address),
                options=options,
                prompts=ScreenPrompts(self.app, self),
            )
        except SignInFailed as failed:  # the server answered, then the sign-in failed
            self._show_error(failed.error)
            reached = None
        except Exception as error:  # every failure becomes words on the status line
            self._show_error(error)
            reached = None
        if reached is None:  # the sign-in said why, or the status line does
            self.post_message(self.Failed())
            return
        backend, sign_in = reached
        self._connected = True
        self._set_status(_("Connected to {name}.").format(name=backend.info.name), kind="info")
        self.post_message(self.Connected(backend, self._tokens_place, sign_in))

    # --- events and actions ------------------------------------------------------------

    @on(Input.Submitted, "#connect-address")
    def _address_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.start_connect(event.value)

    @on(OptionList.OptionHighlighted, "#known-servers")
    def _known_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        entry = self._entries.get(event.option.id or "")
        logo = load_logo(entry.server_id) if entry is not None else None
        self.query_one("#connect-logo-view", LogoView).set_data(logo)

    @on(OptionList.OptionSelected, "#known-servers")
    def _known_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        entry = self._entries.get(event.option.id or "")
        if entry is not None:
            self.address_input.value = entry.address
            self.start_connect(entry.address)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc only while connecting; Delete only on a highlighted known server."""
        if action == "stop":
            return self.busy
        if action == "forget":
            return self.known_list.has_focus and self._highlighted_entry() is not None
        return True

    def _highlighted_entry(self) -> KnownServer | None:
        option = self.known_list.highlighted_option
        return self._entries.get(option.id or "") if option is not None else None

    def action_stop(self) -> None:
        """Stop the running discovery."""
        if self._worker is not None:
            self._worker.cancel()
        self._set_status(_("Stopped."), kind="info")

    def action_forget(self) -> None:
        """Forget the highlighted server, after a confirmation."""
        entry = self._highlighted_entry()
        if entry is None:
            return

        def answered(forget: bool | None) -> None:
            if not forget:
                return
            try:
                self.known.forget(entry.server_id)
            except OSError as error:
                self._set_status(
                    _("Could not update the server list: {error}").format(error=error),
                    kind="error",
                )
                return
            self._refresh_known()
            self._set_status(_("Forgot {name}.").format(name=entry.label), kind="info")

        from talkie_tui.ui.screens.confirm import ConfirmScreen

        self.app.push_screen(
            ConfirmScreen(
                _("Forget {name}?").format(name=one_line(clean_text(entry.label))),
                _(
                    "Talkie forgets {address} and the other sites you accepted for it. "
                    "You can connect to it again at any time."
                ).format(address=one_line(clean_text(entry.address))),
                confirm_label=_("Forget"),
                cancel_label=_("Keep"),
                danger=True,
            ),
            answered,
        )
