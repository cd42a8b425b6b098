"""What sign-in a Talkie server offers: read at every connect, apart from the sign-in flow
itself (`signing.py`), which a start with a token or a kept sign-in does not import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from talkie_tui.config import Settings, settings_path
from talkie_tui.core.sanitize import clean_text
from talkie_tui.i18n import _

if TYPE_CHECKING:
    from talkie_tui.backends.talkie import DiscoveredServer

__all__ = ["Offer", "dev_tokens_refused", "offer_of"]

Offer = Literal["oauth", "dev_token", "dev_token_off", "open"]
"""How a person may sign in: OAuth in the browser, a pasted development token (the switch is
on), only a development token while the switch is off, or nothing needed at all."""


def offer_of(server: DiscoveredServer, settings: Settings) -> Offer:
    """What talkie may offer for `server`: OAuth first; a pasted token only behind the switch."""
    auth = server.manifest.auth
    if auth.oauth is not None:
        return "oauth"
    if auth.token is not None:
        return "dev_token" if settings.dev_tokens else "dev_token_off"
    return "open"


def dev_tokens_refused(server: DiscoveredServer) -> str:
    """Why talkie does not ask for a token here, and how to give one anyway (§2.2)."""
    name = clean_text(server.manifest.name)
    return _(
        "{name} only offers development tokens, and talkie asks for those only when you "
        "allow it: pass --token (or set TALKIE_TOKEN), or set dev_tokens = true in {path}."
    ).format(name=name, path=settings_path())
