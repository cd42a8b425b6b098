"""Which URLs a user may open (§6, §7): https anywhere, or the server's own origin; never more."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from talkie_tui.browser import open_url
from talkie_tui.core.urls import origin_of
from talkie_tui.i18n import _

__all__ = ["LinkTarget", "check_link", "open_in_browser"]


@dataclass(frozen=True, slots=True)
class LinkTarget:
    """A server-given URL made absolute, and whether opening it is allowed."""

    url: str
    allowed: bool
    same_origin: bool
    reason: str = ""
    """Why opening is not allowed, in the UI's language (shown to the user)."""


def check_link(url: str, server_origin: str) -> LinkTarget:
    """Resolve `url` against the server and allow only `https:` or same-origin targets."""
    try:
        absolute = httpx.URL(server_origin + "/").join(url.strip())
        target_origin = origin_of(absolute)
    except (httpx.InvalidURL, TypeError, ValueError):
        return LinkTarget(url, False, False, _("not a valid address"))
    same_origin = target_origin == server_origin
    if absolute.scheme not in ("http", "https"):
        reason = _("{scheme}: links are not opened").format(scheme=absolute.scheme)
        return LinkTarget(str(absolute), False, False, reason)
    if same_origin or absolute.scheme == "https":
        return LinkTarget(str(absolute), True, same_origin)
    reason = _("plain http links to other sites are not opened")
    return LinkTarget(str(absolute), False, False, reason)


def open_in_browser(target: LinkTarget) -> bool:
    """Open an allowed link in a graphical browser (no token is ever attached).

    False when the link is not allowed or no graphical browser is at hand; the caller then
    shows (and copies) the URL instead.
    """
    if not target.allowed:
        return False
    return open_url(target.url)
