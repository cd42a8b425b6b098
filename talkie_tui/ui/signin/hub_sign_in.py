"""The e-mail sign-in screen on a hub's real sign-in (`backends.cuckoo.sign_in`).

`HubEmailCodes` is the screen's `EmailCodeSignIn` for the hub at one address: `send_code` asks
the hub to mail a code, `verify` trades it for the session of this device (a `SignedIn`, which
the caller keeps like every sign-in with `sign_in.keep` and connects with `signed.tokens()`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from talkie_tui.backends.cuckoo import sign_in

if TYPE_CHECKING:
    from talkie_tui.backends.cuckoo.sign_in import SignedIn

__all__ = ["HubEmailCodes"]


@dataclass(frozen=True, slots=True)
class HubEmailCodes:
    """The e-mail codes of the hub at `address` (as the person typed it)."""

    address: str
    allow_private_http: bool = False
    device_name: str | None = None  # None: "talkie on <host>"

    async def send_code(self, email: str) -> None:
        """Ask the hub to mail a sign-in code to `email`."""
        await sign_in.start(self.address, email, allow_private_http=self.allow_private_http)

    async def verify(self, email: str, code: str) -> SignedIn:
        """Trade the code for this device's session."""
        return await sign_in.verify(
            self.address,
            email,
            code,
            device_name=self.device_name,
            allow_private_http=self.allow_private_http,
        )
