"""Signing in to a Minara gateway: its bearer token (`GATEWAY_AUTH_TOKEN`).

The token given on the command line is used as it is. Otherwise the token kept for the
gateway's origin is tried first; then the person is asked for it (`Prompts.ask_token`, which
tries it before it closes), and it is kept like any sign-in: in the store the settings name
(the keyring; when there is none, the person chooses the private file or this session only).
Signing out forgets the token everywhere: a gateway has nothing to revoke. Store calls may
block (a keyring on D-Bus), so they run in threads.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from talkie_tui.backends.base import ServerInfo
from talkie_tui.backends.minara.backend import MinaraBackend, connect, gateway_name, minara_base
from talkie_tui.backends.prompts import Prompts, TokenCheck
from talkie_tui.backends.signing import (
    BearerSignIn,
    mark_signed_in,
    store_for,
)
from talkie_tui.core.errors import UnauthorizedError
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.tokens import StaticToken
from talkie_tui.core.urls import origin_of
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.auth.store import TokenStore
    from talkie_tui.backends.base import Backend
    from talkie_tui.core.tokens import TokenSource

__all__ = ["GatewaySignIn", "gateway_identity", "gateway_origin"]


def gateway_origin(address: str, *, allow_private_http: bool = False) -> str:
    """The origin a gateway address means (a bare `localhost` is port 8080)."""
    return origin_of(minara_base(address, allow_private_http=allow_private_http))


def gateway_identity(address: str, allow_private_http: bool = False) -> ServerInfo:
    """Who the gateway at `address` is before it let us in (its id, name and origin)."""
    origin = gateway_origin(address, allow_private_http=allow_private_http)
    return ServerInfo(origin, origin, "minara", gateway_name(origin), sign_in="token")


@dataclass
class GatewaySignIn(BearerSignIn):
    """A gateway's token: given, kept, or asked for; kept once the gateway took it."""

    backend_type = MinaraBackend

    protocol = "minara"
    refusal = UnauthorizedError

    async def _connect(self, address: str, token: str | None) -> MinaraBackend:
        tokens = StaticToken(token) if token else None
        return await connect(address, tokens=tokens, allow_private_http=self._private_http)

    def _looking(self, address: str) -> str:
        return _("Looking for a Minara gateway at {address}…").format(address=address)

    def _wants(self, address: str, refused: UnauthorizedError) -> tuple[ServerInfo, str]:
        asking = _("The gateway at {address} asks for its token…").format(address=address)
        return gateway_identity(address, self._private_http), asking

    async def _open(
        self, address: str, refused: UnauthorizedError, prompts: Prompts
    ) -> MinaraBackend | None:
        """The gateway signed in with its kept token, else one the person gives (None when
        they cancel). `refused` is the gateway's answer without a token."""
        origin = gateway_origin(address, allow_private_http=self._private_http)
        found = None if self.options.anew else await asyncio.to_thread(self._kept, origin, origin)
        reason = refused.message
        if found is not None:
            try:
                return await self._connect(address, found[0])
            except UnauthorizedError as error:  # changed on the gateway: ask for the new one
                reason = _("The token kept for this gateway was refused: {error}").format(
                    error=error.message
                )
        reached: list[MinaraBackend] = []

        async def check(token: str) -> None:
            reached.append(await self._connect(address, token))

        asked = await self._ask(gateway_name(origin), origin, check, reason, prompts)
        if asked is None or not reached:
            return None
        backend = reached[-1]
        await self._keep(backend, *asked, prompts)
        return backend

    async def again(
        self, backend: Backend, message: str, prompts: Prompts, *, asked: bool
    ) -> bool | None:
        """Ask for a new token for a gateway that refused the one in use; True once taken."""
        assert isinstance(backend, MinaraBackend)
        info = backend.info
        reason = (
            _(
                "{name} did not accept the token: {message} Give it again to go on; the "
                "conversation and what you typed are kept."
            ).format(name=clean_text(info.name), message=message)
            if message
            else ""
        )
        old = backend.client.tokens

        async def check(token: str) -> None:
            backend.use_tokens(StaticToken(token))
            try:
                await backend.account()
            except BaseException:
                backend.use_tokens(old)
                raise

        given = await self._ask(info.name, info.origin, check, reason, prompts)
        if given is None:
            return False
        await self._keep(backend, *given, prompts)
        return True

    async def sign_out(self, backend: Backend, prompts: Prompts) -> None:
        """Forget the gateway's kept token everywhere (there is nothing to revoke)."""
        from talkie_tui.auth.store import ForgetIncomplete, forget_everywhere

        server_id, name = backend.info.server_id, clean_text(backend.info.name)
        try:
            await asyncio.to_thread(forget_everywhere, server_id)
        except ForgetIncomplete as error:
            prompts.tell(
                _("Signed out of {name}, but {error}.").format(name=name, error=error.message),
                "error",
            )
            return
        mark_signed_in(self.options.known, server_id, False)
        prompts.tell(_("Signed out of {name}: its token is forgotten.").format(name=name))

    def _tokens(self, backend: Backend) -> TokenSource | None:
        assert isinstance(backend, MinaraBackend)
        return backend.client.tokens

    async def _ask(
        self, name: str, origin: str, check: TokenCheck, reason: str, prompts: Prompts
    ) -> tuple[str, TokenStore] | None:
        """The token the person gave (and the gateway took), and where to keep it."""
        store = await store_for(self.options.settings, name, prompts)
        if store is None:
            return None
        token = await prompts.ask_token(
            name, origin, check, reason=reason, kept_in=store.describe()
        )
        return (token, store) if token is not None else None

    async def _keep(
        self, backend: MinaraBackend, token: str, store: TokenStore, prompts: Prompts
    ) -> None:
        failed = _("Signed in for this session only: the token could not be kept ({error}).")
        await self._keep_token(store, backend.info, token, prompts, failed)
