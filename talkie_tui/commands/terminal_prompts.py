"""The terminal's `Prompts`: what a protocol's sign-in asks, asked on stdin and said on stderr.

`talkie login` signs in through these: where to keep the sign-in when there is no keyring (a
y/N question), a gateway's token ($MINARA_TOKEN, else typed without echo), a hub's e-mail
address and code, a Talkie server's sign-in in the browser (the address printed on stdout,
the browser's final address taken pasted). Reads run in threads: stdin cannot be cancelled.
"""

from __future__ import annotations

import asyncio
import getpass
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from talkie_tui.browser import graphical_browser_available, open_url
from talkie_tui.config import gateway_token, settings_path
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.backends.prompts import (
        BrowserFlow,
        BrowserServer,
        EmailCodes,
        FlowFactory,
        Severity,
        TokenCheck,
    )
    from talkie_tui.core.tokens import TokenSource

__all__ = ["CODE_TRIES", "TerminalPrompts", "isatty"]

CODE_TRIES = 5
"""How many codes `talkie login` takes before it gives up (the hub allows five per code)."""


def isatty(stream: TextIO) -> bool:
    """Whether `stream` is a terminal (a stream without a file is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _read_lines(stdin: TextIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str]) -> None:
    """Feed pasted lines to the event loop (a daemon thread: stdin reads cannot be cancelled)."""
    for line in stdin:
        loop.call_soon_threadsafe(queue.put_nowait, line)
    loop.call_soon_threadsafe(queue.put_nowait, "")


@dataclass
class TerminalPrompts:
    """`Prompts` on a terminal: questions on `err`, answers from `stdin`, URLs on `out`."""

    stdin: TextIO
    out: TextIO
    err: TextIO
    no_browser: bool = False

    def say(self, text: str, *, kind: str = "info", busy: bool = False) -> None:
        """Only why connecting stopped is said: the command says what it did when done."""
        if kind == "error":
            self._warn(text.removeprefix("✗ "))

    def tell(self, text: str, severity: Severity = "information") -> None:
        """A line on stderr; a warning or an error marked as talkie's, like a failure."""
        if severity == "information":
            self.err.write(f"{text}\n")
        else:
            self._warn(text)

    def _warn(self, text: str) -> None:
        """What went wrong, or why nothing was done: a line on stderr marked as talkie's."""
        self.err.write(f"talkie: {text}\n")

    def changed(self) -> None:
        """Nothing to show again on a terminal."""

    async def _line(self, prompt: str) -> str:
        """One line typed after `prompt` (on stderr); "" at the end of input."""
        self.err.write(prompt)
        self.err.flush()
        return (await asyncio.to_thread(self.stdin.readline)).strip()

    async def choose_store(self, name: str, reason: str) -> str | None:
        """Asks (never silently) whether a private file may keep the sign-in."""
        self.err.write(f"talkie: there is no usable system keyring here: {reason}\n")
        self.err.write(
            "  Talkie can keep the sign-in in a file readable only by you instead; to choose it "
            f'for good, set token_storage = "file" in {settings_path()},\n'
            "  or run `talkie login SERVER --store file`.\n"
        )
        answer = ""
        if isatty(self.stdin):
            answer = await self._line("  Keep the sign-in in a private file this time? [y/N] ")
        if answer.lower() in ("y", "yes"):
            return "file"
        self._warn("not signed in: there is nowhere to keep the sign-in.")
        return None

    async def confirm(self, title: str, body: str, *, accept: str, refuse: str) -> bool:
        """`body`, then a y/N question (no at the end of input)."""
        self.err.write(f"{title}\n{body}\n")
        return (await self._line(f"{accept}? [y/N] ")).lower() in ("y", "yes")

    async def ask_token(
        self, name: str, origin: str, check: TokenCheck, *, reason: str, kept_in: str
    ) -> str | None:
        """$MINARA_TOKEN, else asked without echo on a terminal (else stdin's first line);
        `check` tries it (its TalkieError is the caller's to report)."""
        if reason:
            self._warn(clean_text(reason))
        token = gateway_token() or await asyncio.to_thread(self._read_token)
        if not token:
            self._warn("not signed in: no token was given.")
            return None
        await check(token)
        return token

    def _read_token(self) -> str:
        if self.stdin.isatty():
            prompt = "Gateway token (GATEWAY_AUTH_TOKEN): "
            return getpass.getpass(prompt, stream=self.err).strip()
        return self.stdin.readline().strip()

    async def ask_email_code(
        self, name: str, origin: str, codes: EmailCodes, *, reason: str, kept_in: str
    ) -> Any:
        """The e-mail address, then the code the hub mails (up to `CODE_TRIES` of them)."""
        from talkie_tui.backends.cuckoo.sign_in import CODE_DIGITS

        if not isatty(self.stdin):
            self._warn(
                f"signing in to {clean_text(name)} asks for your e-mail address and the code "
                "the hub sends, typed at a terminal; there is none here.\n"
                "  Run `talkie login` in a terminal, or pass a session token with --token or "
                "$CUCKOO_TOKEN."
            )
            return None
        self.err.write(f"Signing in to {clean_text(name)} with your e-mail address.\n")
        email = await self._line("E-mail address: ")
        if not email:
            self._warn("not signed in: no e-mail address was given.")
            return None
        await codes.send_code(email)
        self.err.write(
            f"The hub sends a {CODE_DIGITS}-digit code to {clean_text(email)} (valid for "
            "ten minutes).\n"
        )
        for _try in range(CODE_TRIES):
            code = await self._line("Code: ")
            if not code:
                self._warn("not signed in: no code was given.")
                return None
            try:
                return await codes.verify(email, code)
            except UnauthorizedError as refused:
                self._warn(f"{clean_text(refused.message)} Type the code again.")
        self._warn("not signed in: the code was not taken.")
        return None

    async def ask_browser(
        self, server: BrowserServer, flow: FlowFactory | None, *, offer_dev_token: bool, reason: str
    ) -> TokenSource | None:
        """The sign-in address printed (and opened where a browser can be); the loopback
        receiver or a pasted final address finishes it. Its TalkieError is the caller's."""
        if flow is None:  # a development token is given with --token, never asked here
            text = _(
                "{server} does not offer OAuth sign-in (its manifest has no auth.oauth); "
                "use the development token it describes, if any."
            )
            self._warn(text.format(server=clean_text(server.manifest.name)))
            return None
        sign_in = flow()
        try:
            url = await sign_in.start()
            oauth = server.manifest.auth.oauth
            issuer = oauth.issuer if oauth is not None else "its sign-in server"
            name = clean_text(server.manifest.name)
            self.err.write(f"Signing in to {name} through {issuer}.\n")
            opened = False
            if not self.no_browser and graphical_browser_available():
                opened = await asyncio.to_thread(open_url, url)
            self.err.write(
                "Your browser should show the sign-in page now; if not, open this address:\n"
                if opened
                else "Open this address in a browser (on any computer) and sign in:\n"
            )
            self.out.write(url + "\n")
            self.out.flush()
            self.err.write(
                "Then come back here. If the browser ends on a page that cannot be reached "
                "(common over SSH), copy the whole address from its address bar and paste it "
                "here, then press Enter.\nWaiting for the sign-in (Ctrl+C cancels)…\n"
            )
            self.err.flush()
            pastes = asyncio.create_task(self._take_pastes(sign_in))
            try:
                tokens: TokenSource = await sign_in.wait()
                return tokens
            finally:
                pastes.cancel()
        finally:
            await sign_in.aclose()

    async def _take_pastes(self, sign_in: BrowserFlow) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str] = asyncio.Queue()
        reader = threading.Thread(target=_read_lines, args=(self.stdin, loop, queue), daemon=True)
        reader.start()
        while True:
            line = await queue.get()
            if not line:
                return  # end of input: the loopback receiver may still finish the sign-in
            if not line.strip():
                continue
            outcome = sign_in.submit(line)
            if outcome.finished:
                return
            self.err.write(f"talkie: {outcome.message}\n  Paste the whole address again: ")
            self.err.flush()
