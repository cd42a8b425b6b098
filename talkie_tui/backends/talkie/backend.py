"""The talkie/1 backend: a `TalkieClient` and its chat sessions behind the `Backend` interface,
with the parts only talkie/1 offers: actions decided (`Decides`) and voice calls (`Calls`).

The client (and AG-UI under it) is imported once the address has a manifest: `backends.connect`
tries talkie/1 first, and a gateway's or a hub's `talkie ask` imports neither (issue 24).
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from talkie_tui.backends.base import (
    Account,
    Backend,
    Calls,
    Capabilities,
    DecidedBy,
    Decides,
    Decision,
    KeptSignIn,
    PacesReads,
    ServerInfo,
    Session,
)
from talkie_tui.backends.talkie.discovery import connect_client

if TYPE_CHECKING:
    import httpx

    from talkie_tui.auth.tokens import OAuthTokens
    from talkie_tui.backends.talkie.session import TalkieOutgoing, TalkieSession
    from talkie_tui.core.tokens import TokenSource
    from talkie_tui.protocol.talkie.client import TalkieClient
    from talkie_tui.protocol.talkie.manifest import DiscoveredServer
    from talkie_tui.protocol.talkie.models import Action, DecisionResult, Thread
    from talkie_tui.voice.audio import AudioSink, AudioSource
    from talkie_tui.voice.call import VoiceCall
    from talkie_tui.voice.call_updates import Listener

__all__ = ["TalkieBackend", "connect", "server_info"]


def _offered(value: Any) -> bool:
    """A capability is offered when the manifest names it with anything but false."""
    return value is not None and value is not False


def server_info(server: DiscoveredServer) -> ServerInfo:
    """What a talkie/1 manifest says about the server, in the terms of every protocol."""
    manifest = server.manifest
    actions = manifest.capabilities.get("actions")
    return ServerInfo(
        server_id=server.server_id,
        origin=server.origin,
        protocol="talkie",
        name=manifest.name,
        description=manifest.description or "",
        locale=manifest.locale,
        accent=manifest.brand.accent,
        max_message_chars=manifest.limits.max_message_chars,
        capabilities=Capabilities(
            voice=bool(manifest.voice) and server.has_endpoint("voiceSessions"),
            actions=_offered(actions),
            actions_by_voice=isinstance(actions, dict) and actions.get("voiceConfirm") is True,
            stop=server.has_endpoint("cancelRun"),
        ),
    )


async def connect(
    address: str,
    *,
    tokens: TokenSource | None = None,
    kept: KeptSignIn | None = None,
    allow_private_http: bool = False,
) -> TalkieBackend:
    """Discover the Talkie server at `address` (§1) and sign in with `tokens`, or else with the
    OAuth sign-in kept for it (`kept`), if there is one for its issuer."""
    client = await connect_client(address, tokens=tokens, allow_private_http=allow_private_http)
    if tokens is None and kept is not None:
        from talkie_tui.auth.signin import tokens_for

        def stored_sign_in() -> OAuthTokens | None:
            return tokens_for(
                client.server,
                client_id=kept.oauth_client_id,
                store=kept.store(),
                allow_private_http=allow_private_http,
                warn=kept.warn,
            )

        # Keyring look-ups may block on D-Bus: off the event loop.
        client.tokens = await asyncio.to_thread(stored_sign_in)
    return TalkieBackend(client)


class TalkieBackend:
    """A Talkie server reached through one `TalkieClient` (tokens for its origin only)."""

    def __init__(self, client: TalkieClient) -> None:
        self.client = client  # voice calls (§10) are talkie/1's own: they take the client

    @property
    def info(self) -> ServerInfo:
        """Who the server is, from its manifest (re-read when the manifest is refreshed)."""
        return server_info(self.client.server)

    def pace_reads(self, seconds: float) -> None:
        """Rest `seconds` after a read of a run's stream that waited (PacesReads)."""
        self.client.read_pause = seconds

    def new_session(self, thread_id: str | None = None) -> TalkieSession:
        """A chat session for a new thread, or for `thread_id`."""
        from talkie_tui.backends.talkie.session import TalkieSession

        return TalkieSession(self.client, thread_id)

    async def account(self) -> Account:
        """`GET status`: the signed-in user, usage meters, and whether voice is allowed."""
        status = await self.client.status()
        return Account(status.user, tuple(status.usage), voice_allowed=status.voice)

    async def threads(self) -> list[Thread]:
        """`GET threads`."""
        return await self.client.threads()

    async def delete_thread(self, thread_id: str) -> None:
        """`DELETE thread`."""
        await self.client.delete_thread(thread_id)

    async def stop(self, run_id: str) -> None:
        """`POST cancelRun`."""
        await self.client.cancel_run(run_id)

    async def action(self, action_id: str) -> Action:
        """`GET action`."""
        return await self.client.action(action_id)

    async def decide(self, action: Action, decision: Decision, method: DecidedBy) -> DecisionResult:
        """`POST decision`."""
        return await self.client.decide(action, decision, method)

    def is_same_origin(self, url: str) -> bool:
        """True when `url` is on the server's origin."""
        return self.client.is_same_origin(url)

    def resolve_url(self, url: str) -> str:
        """`url` made absolute against the server's origin."""
        return self.client.resolve_url(url)

    def download(self, url: str) -> AbstractAsyncContextManager[httpx.Response]:
        """A streamed GET (the bearer only for the server's origin; no redirects)."""
        return self.client.open_stream(url)

    async def logo(self) -> bytes | None:
        """The brand logo, checked before it is decoded (None when absent or unusable)."""
        from talkie_tui.protocol.talkie.logo import fetch_logo

        return await fetch_logo(self.client)

    def voice_call(
        self,
        *,
        microphone: AudioSource,
        speaker: AudioSink,
        listener: Listener,
        thread_id: str | None,
        allow_http_signaling: bool = False,
    ) -> VoiceCall:
        """A §10 call over WebRTC, in the server's language (the voice stack loads here)."""
        from talkie_tui.voice.call import VoiceCall

        return VoiceCall(
            self.client,
            microphone=microphone,
            speaker=speaker,
            listener=listener,
            thread_id=thread_id,
            locale=self.client.server.manifest.locale,
            allow_http_signaling=allow_http_signaling,
        )

    async def aclose(self) -> None:
        """Close the client's connections (and its token source's)."""
        await self.client.aclose()


def _implements_backend(backend: TalkieBackend) -> Backend:
    """Checked by mypy only: the talkie/1 backend has every member of the interface."""
    return backend


def _implements_session(session: TalkieSession) -> Session[TalkieOutgoing]:
    """Checked by mypy only: the talkie/1 chat session has every member of the interface."""
    return session


def _implements_extras(backend: TalkieBackend) -> tuple[Decides, Calls, PacesReads]:
    """Checked by mypy only: the optional parts only talkie/1 offers (actions, calls)."""
    return backend, backend, backend
