"""CuckooClient: the routes of a Cuckoo hub's client API a person's app uses (`notes/cuckoo.md`).

Every request leaves through `RestClient._send` (`protocol/rest.py`): the session token as the
bearer for the hub's origin only, no redirect followed, typed errors in the hub's words
(`errors.error_for`). The hub refuses unknown fields, so a body carries only the fields
chosen. A send always carries an idempotency key, and a send that failed on the way (the
network, or the hub's 5xx) is tried again once with the same key: the hub answers the second
with the message the first made, if it made one.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import httpx

from talkie_tui.core.errors import ServerError, TalkieError, TransportError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import TokenSource
from talkie_tui.i18n import _
from talkie_tui.protocol.cuckoo.errors import error_for
from talkie_tui.protocol.cuckoo.files import (
    MAX_BYTES,
    FileRefused,
    ProbedUpload,
    check_count,
    probe_upload,
)
from talkie_tui.protocol.cuckoo.models import (
    Conversation,
    Device,
    Media,
    Message,
    Page,
    SignInResult,
    Storage,
    User,
)
from talkie_tui.protocol.cuckoo.voice_note import VoiceNote
from talkie_tui.protocol.net.addresses import check_secure, service_url
from talkie_tui.protocol.net.failures import network_errors
from talkie_tui.protocol.net.rest import MAX_ANSWER_BYTES, RestClient, path_segment, read_limited
from talkie_tui.protocol.net.upload_body import FileBody, Progress

__all__ = [
    "MAX_DEVICE_NAME",
    "CuckooClient",
    "default_device_name",
    "hub_base",
    "new_idempotency_key",
]

MAX_DEVICE_NAME = 80
MAX_PAGE = 100
# An upload may take long on a slow line; each write of a chunk must still progress.
UPLOAD_TIMEOUT = httpx.Timeout(60.0, connect=10.0, write=60.0, read=120.0)
SEND_RETRY_DELAY = 0.5


def hub_base(address: str, *, allow_private_http: bool = False) -> str:
    """The hub's base URL (its origin plus any path prefix, ending in "/") for `host[:port]`
    (plain http for loopback, else https) or a URL; plain http elsewhere is refused."""
    url = service_url(address, allow_private_http=allow_private_http)
    path = url.path if url.path.endswith("/") else url.path + "/"
    return str(url.copy_with(path=path, query=None, fragment=None))


def default_device_name() -> str:
    """How this device is listed among the person's signed-in devices."""
    return _one_line(f"talkie on {socket.gethostname() or 'this computer'}")


def _one_line(name: str) -> str:
    """A device name as the hub takes it: one line of at most 80 characters."""
    return " ".join(clean_text(name).split())[:MAX_DEVICE_NAME]


def new_idempotency_key() -> str:
    """A fresh key for one send: the same key on a retry makes the hub answer, not send twice."""
    return f"talkie-{time.time_ns():x}-{secrets.token_hex(6)}"


class CuckooClient(RestClient):
    """One hub, as a signed-in person sees it: its client routes as typed methods."""

    def __init__(
        self,
        base_url: str,
        *,
        tokens: TokenSource | None = None,
        http: httpx.AsyncClient | None = None,
        allow_private_http: bool = False,
    ) -> None:
        check_secure(httpx.URL(base_url), allow_private_http=allow_private_http)
        super().__init__(base_url, tokens=tokens, http=http)

    def _error_for(self, response: httpx.Response) -> ServerError:
        return error_for(response)

    def _unreadable(self, route: str, problem: str) -> TalkieError:
        return TalkieError(
            _("The hub's answer to '{route}' is unreadable ({problem}).").format(
                route=route.split("?", 1)[0], problem=clean_text(problem)[:200]
            )
        )

    def _too_large(self, limit: int) -> TalkieError:
        return TransportError(
            _("The hub's answer is larger than {limit} MiB; it was refused.").format(
                limit=limit // 1048576
            ),
            retryable=False,
        )

    async def _field(
        self, model: type[Any], method: str, route: str, key: str, **options: Any
    ) -> Any:
        """The answer's `key` read as `model` (the hub wraps most answers in one field)."""
        data = await self._json(method, route, **options)
        return self._validate(model, data.get(key) if isinstance(data, dict) else None, route)

    async def _items(self, model: type[Any], route: str, key: str) -> list[Any]:
        """The readable rows of a listing's `key` (one bad row hides nothing else)."""
        data = await self._json("GET", route)
        rows = data.get(key) if isinstance(data, dict) else None
        kept = []
        for row in rows if isinstance(rows, list) else []:
            try:
                kept.append(model.model_validate(row))
            except ValueError:
                continue
        return kept

    async def healthz(self) -> None:
        """`GET /healthz` (no sign-in): raises unless the hub answers it with a 2xx."""
        await self._send("GET", self.url("healthz"), timeout=httpx.Timeout(10.0))

    # --- sign-in -------------------------------------------------------------------------

    async def start_email_sign_in(self, email: str) -> None:
        """`POST /v1/auth/email/start`: the hub mails a six-digit code (or says nothing of an
        address it does not know: the answer is the same)."""
        await self._send("POST", self.url("v1/auth/email/start"), body={"email": email.strip()})

    async def verify_email_code(
        self, email: str, code: str, device_name: str | None = None
    ) -> SignInResult:
        """`POST /v1/auth/email/verify`: the session token and the person, for this device."""
        body = {
            "email": email.strip(),
            "code": code.strip(),
            "device_name": _one_line(device_name) if device_name else default_device_name(),
        }
        return await self._model(SignInResult, "POST", "v1/auth/email/verify", body=body)

    async def logout(self) -> None:
        """`POST /v1/auth/logout`: end this device's session on the hub."""
        await self._send("POST", self.url("v1/auth/logout"))

    # --- the person ----------------------------------------------------------------------

    async def me(self) -> User:
        """`GET /v1/client/me`."""
        user: User = await self._field(User, "GET", "v1/client/me", "user")
        return user

    async def storage(self) -> Storage:
        """`GET /v1/client/me/storage`: the media budget, and how long messages are kept."""
        return await self._model(Storage, "GET", "v1/client/me/storage")

    async def devices(self) -> list[Device]:
        """`GET /v1/client/devices`: every signed-in device, `current` the one asking."""
        return await self._items(Device, "v1/client/devices", "devices")

    async def end_device(self, device_id: str) -> None:
        """`DELETE /v1/client/devices/{id}`: sign one device out."""
        await self._send("DELETE", self.url(f"v1/client/devices/{path_segment(device_id)}"))

    async def end_other_devices(self) -> None:
        """`DELETE /v1/client/devices`: sign out every device but this one."""
        await self._send("DELETE", self.url("v1/client/devices"))

    # --- conversations -------------------------------------------------------------------

    async def conversations(self) -> list[Conversation]:
        """`GET /v1/client/conversations` (the hub does not page them)."""
        return await self._items(Conversation, "v1/client/conversations", "conversations")

    async def conversation(self, conversation_id: str) -> Conversation:
        """`GET /v1/client/conversations/{id}`."""
        route = f"v1/client/conversations/{path_segment(conversation_id)}"
        conversation: Conversation = await self._field(Conversation, "GET", route, "conversation")
        return conversation

    async def messages(
        self,
        conversation_id: str,
        *,
        before: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> Page:
        """`GET …/messages`: the newest page (no cursor), the page before a message (newest
        first), or the page after one (oldest first: how a gap is filled)."""
        if limit is not None and not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be 1..{MAX_PAGE}, not {limit}")
        chosen = {"before": before, "after": after, "limit": limit}
        params = {name: str(value) for name, value in chosen.items() if value is not None}
        route = f"v1/client/conversations/{path_segment(conversation_id)}/messages"
        return await self._model(Page, "GET", route, params=params)

    async def send(
        self,
        conversation_id: str,
        text: str,
        *,
        attachments: Sequence[str] = (),
        reply_to: str | None = None,
        idempotency_key: str | None = None,
    ) -> Message:
        """`POST …/messages`: the person's message (text, uploaded media ids, the message it
        answers) as the hub stored it; with the same key a second send gives the same one."""
        check_count(len(attachments))
        body: dict[str, Any] = {"text": text}
        if attachments:
            body["attachments"] = list(attachments)
        if reply_to is not None:
            body["reply_to"] = reply_to
        return await self._post_message(conversation_id, body, idempotency_key)

    async def tap(
        self,
        conversation_id: str,
        button_id: str,
        source_message_id: str,
        *,
        idempotency_key: str | None = None,
    ) -> Message:
        """Tap a button of an agent's message: the hub sends its label as the person's text
        and marks the button taken on the source message."""
        body = {"action": {"button_id": button_id, "source_message_id": source_message_id}}
        return await self._post_message(conversation_id, body, idempotency_key)

    async def _post_message(
        self, conversation_id: str, body: dict[str, Any], idempotency_key: str | None
    ) -> Message:
        body = {**body, "idempotency_key": idempotency_key or new_idempotency_key()}
        route = f"v1/client/conversations/{path_segment(conversation_id)}/messages"
        try:
            message: Message = await self._field(Message, "POST", route, "message", body=body)
        except (TransportError, ServerError) as error:
            transient = isinstance(error, TransportError) or error.status >= 500
            if not (error.retryable and transient):
                raise
            await asyncio.sleep(SEND_RETRY_DELAY)
            message = await self._field(Message, "POST", route, "message", body=body)
        return message

    async def stop(self, conversation_id: str) -> list[Message]:
        """`POST …/stop`: the agents' replies in progress, finished where they stood."""
        route = f"v1/client/conversations/{path_segment(conversation_id)}/stop"
        data = await self._json("POST", route)
        rows = data.get("stopped") if isinstance(data, dict) else None
        stopped = []
        for row in rows if isinstance(rows, list) else []:
            try:
                stopped.append(Message.model_validate(row))
            except ValueError:
                continue
        return stopped

    async def clear(self, conversation_id: str) -> None:
        """`POST …/clear`: hide everything so far from this person (the agent keeps it)."""
        route = f"v1/client/conversations/{path_segment(conversation_id)}/clear"
        await self._send("POST", self.url(route))

    async def read(self, conversation_id: str, message_id: str) -> None:
        """`POST …/read`: the person has read up to `message_id`."""
        route = f"v1/client/conversations/{path_segment(conversation_id)}/read"
        await self._send("POST", self.url(route), body={"message_id": message_id})

    # --- media ---------------------------------------------------------------------------

    async def upload(
        self,
        path: Path,
        *,
        progress: Progress | None = None,
        probed: ProbedUpload | None = None,
    ) -> Media:
        """`POST /v1/client/media?name=` with the file as the raw body, checked before a byte
        goes; `progress(sent, total)` as its bytes go out."""
        probed = probed or probe_upload(path)
        body = FileBody(path, progress=progress)
        headers = {"Content-Type": probed.media_type, "Content-Length": str(body.total)}
        media: Media = await self._field(
            Media,
            "POST",
            "v1/client/media",
            "media",
            content=body.chunks(),
            headers=headers,
            params={"name": probed.filename},
            timeout=UPLOAD_TIMEOUT,
        )
        return media

    async def upload_voice_note(self, note: VoiceNote, name: str) -> Media:
        """`POST /v1/client/media?name=&kind=audio&duration_ms=&waveform=` with the note's WAV
        (`voice_note.py`): the hub keeps its length and waveform for the other side."""
        if len(note.wav) > MAX_BYTES["audio"]:
            raise FileRefused(_("The voice note is over the hub's 16 MiB of audio."))
        media: Media = await self._field(
            Media,
            "POST",
            "v1/client/media",
            "media",
            content=note.wav,
            headers={"Content-Type": "audio/wav"},
            params={"name": name, **note.upload_params()},
            timeout=UPLOAD_TIMEOUT,
        )
        return media

    def media_url(self, media_id: str, variant: Literal["thumb"] | None = None) -> str:
        """Where a file's bytes are: `/v1/client/media/{id}` (`?variant=thumb`: a thumbnail)."""
        url = self.url(f"v1/client/media/{path_segment(media_id)}")
        return url + "?variant=thumb" if variant == "thumb" else url

    @asynccontextmanager
    async def open_media(
        self, media_id: str, variant: Literal["thumb"] | None = None
    ) -> AsyncIterator[httpx.Response]:
        """A streamed `GET /v1/client/media/{id}`, to read chunk by chunk."""
        response = await self._send("GET", self.media_url(media_id, variant), stream=True)
        try:
            with network_errors(self.origin):
                yield response
        finally:
            await response.aclose()

    @asynccontextmanager
    async def open_file(self, url: str) -> AsyncIterator[httpx.Response]:
        """A streamed GET of a file the hub named by a path or URL on its own origin (another
        origin is refused: the session token goes nowhere else)."""
        if not self.is_same_origin(url):
            raise TalkieError(
                _(
                    "{url} is not on the hub's own address; talkie does not send it the sign-in."
                ).format(url=clean_text(url)[:200])
            )
        response = await self._send("GET", self.resolve_url(url), stream=True)
        try:
            with network_errors(self.origin):
                yield response
        finally:
            await response.aclose()

    async def download(
        self,
        media_id: str,
        variant: Literal["thumb"] | None = None,
        *,
        limit: int = MAX_ANSWER_BYTES,
    ) -> bytes:
        """A file's bytes (at most `limit` of them: a larger answer is refused)."""
        async with self.open_media(media_id, variant) as response:
            await read_limited(response, limit, self._too_large)
            return response.content

    # --- the socket ----------------------------------------------------------------------

    def socket_url(self) -> str:
        """The client socket: `ws[s]://…/v1/client/socket` (wss unless http was allowed)."""
        url = httpx.URL(self.url("v1/client/socket"))
        return str(url.copy_with(scheme="wss" if url.scheme == "https" else "ws"))
