"""Which proxy a request goes through: the environment's and the system's settings, NO_PROXY.

Proxies come from the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, lower case too,
lower case first) or, when it names none, from the system settings that
`urllib.request.getproxies()` reads on macOS and Windows (their exception lists and PAC files
are not read: set NO_PROXY). `NO_PROXY` lists hosts to reach directly: names (`example.com`
also covers its subdomains, so does `.example.com`), IP addresses, CIDR ranges
(`10.0.0.0/8`), an optional `:port`, or `*` for everything. Loopback addresses (`localhost`,
`*.localhost`, `127.0.0.0/8`, `::1`) always go direct, as in Go's net/http: a proxy elsewhere
cannot reach this computer's loopback, and that is where `talkie demo`, development servers
and the voice test provider live.
"""

from __future__ import annotations

import ipaddress
import os
import re
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from talkie_tui.core.urls import is_loopback_host
from talkie_tui.i18n import N_, _

__all__ = [
    "PROXY_EXTENSION",
    "ProxySetting",
    "ProxySettings",
    "ProxySetupError",
    "mask_url",
    "proxy_settings",
]

# Where the request records which proxy carried it, for `describe_failure`.
PROXY_EXTENSION = "talkie.proxy"
# The `source` of a proxy found in the operating system's settings (translated where shown).
SYSTEM_SETTINGS = N_("system settings")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def mask_url(url: str) -> str:
    """`url` without its password (`http://alice:***@proxy:3128`), for messages and logs."""
    try:
        parsed = httpx.URL(url if "://" in url else f"http://{url}")
    except (httpx.InvalidURL, TypeError):
        # Unparseable: still hide anything between "://" and "@".
        return re.sub(r"(?<=://)[^/@\s]*@", "***@", url)
    if not parsed.userinfo:
        return str(parsed).rstrip("/")
    user, password = parsed.username, parsed.password
    if user:
        masked = parsed.copy_with(username=user, password="***" if password else None)
    else:
        masked = parsed.copy_with(username="***", password=None)
    return str(masked).rstrip("/")


@dataclass(frozen=True)
class ProxySetting:
    """One proxy: its URL as configured (maybe with a password) and where it was found."""

    url: str
    source: str
    """The variable (`HTTPS_PROXY`…) or "system settings"."""

    @property
    def shown(self) -> str:
        """The URL with its password masked."""
        return mask_url(self.url)

    @property
    def has_credentials(self) -> bool:
        """True when the URL carries a user name (and password) for the proxy."""
        try:
            return bool(httpx.URL(self.normalized).userinfo)
        except httpx.InvalidURL:
            return False

    @property
    def normalized(self) -> str:
        """The URL with a scheme (`proxy:3128` means `http://proxy:3128`, as in curl)."""
        return self.url if "://" in self.url else f"http://{self.url}"

    @property
    def where_found(self) -> str:
        """Where it was found, in the UI's language (a variable name stays as is)."""
        return _(SYSTEM_SETTINGS) if self.source == SYSTEM_SETTINGS else self.source


def _split_port(entry: str) -> tuple[str, int | None]:
    """`host:port`, `[v6]:port`, a bare IPv6 address or a host, as (host, port)."""
    if entry.startswith("["):
        host, _bracket, rest = entry[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
        return host, int(port) if port.isdigit() else None
    if entry.count(":") == 1:
        host, _colon, port = entry.partition(":")
        if port.isdigit():
            return host, int(port)
    return entry, None


def _no_proxy_matches(entry: str, host: str, port: int) -> bool:
    """True when one NO_PROXY entry covers `host:port` (curl's rules, plus CIDR ranges)."""
    name, entry_port = _split_port(entry.strip().lower())
    if entry_port is not None and entry_port != port:
        return False
    if "/" in name:
        try:
            network = ipaddress.ip_network(name, strict=False)
            return ipaddress.ip_address(host) in network
        except ValueError:
            return False
    try:
        return ipaddress.ip_address(name) == ipaddress.ip_address(host)
    except ValueError:
        pass
    name = name.lstrip("*").lstrip(".").rstrip(".")
    return bool(name) and (host == name or host.endswith("." + name))


@dataclass(frozen=True)
class ProxySettings:
    """The proxies in effect and the hosts reached without them."""

    http: ProxySetting | None = None
    https: ProxySetting | None = None
    no_proxy: tuple[str, ...] = ()
    no_proxy_source: str = ""

    def proxy_for(self, url: httpx.URL | str) -> ProxySetting | None:
        """The proxy a request to `url` goes through, or None for a direct connection."""
        url = httpx.URL(url)
        proxy = self.https if url.scheme == "https" else self.http
        host = url.host.strip("[]").lower().rstrip(".")
        if proxy is None or is_loopback_host(host):
            return None
        port = url.port or _DEFAULT_PORTS.get(url.scheme, 0)
        if any(entry == "*" or _no_proxy_matches(entry, host, port) for entry in self.no_proxy):
            return None
        return proxy


def _proxy_variables(environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """`{"http": (url, variable), …}` from `*_proxy` variables, as urllib reads them."""
    found: dict[str, tuple[str, str]] = {}
    # Upper case first, then lower case over it: lower case wins, as in urllib and curl.
    for lower_pass in (False, True):
        for variable, value in environ.items():
            if variable.islower() != lower_pass or not variable.lower().endswith("_proxy"):
                continue
            scheme = variable[: -len("_proxy")].lower()
            if not value.strip():
                # An empty lower-case variable switches the proxy off, as in urllib.
                if lower_pass:
                    found.pop(scheme, None)
                continue
            # Under CGI, HTTP_PROXY is the client's "Proxy:" header (httpoxy): ignored.
            if variable == "HTTP_PROXY" and "REQUEST_METHOD" in environ:
                continue
            found[scheme] = (value.strip(), variable)
    return found


def proxy_settings(environ: Mapping[str, str] | None = None) -> ProxySettings:
    """The proxy settings of the environment (or, without any, of the system)."""
    environ = os.environ if environ is None else environ
    variables = _proxy_variables(environ)
    if not any(k in variables for k in ("http", "https", "all")) and environ is os.environ:
        # macOS and Windows keep proxies in the system settings; urllib reads them there.
        system = urllib.request.getproxies()
        for scheme in ("http", "https", "all"):
            if system.get(scheme):
                variables[scheme] = (system[scheme], SYSTEM_SETTINGS)

    def pick(scheme: str) -> ProxySetting | None:
        chosen = variables.get(scheme) or variables.get("all")
        return ProxySetting(*chosen) if chosen else None

    no_proxy, no_proxy_source = variables.get("no", ("", ""))
    entries = tuple(e.strip() for e in re.split(r"[,\s]+", no_proxy) if e.strip())
    return ProxySettings(
        http=pick("http"), https=pick("https"), no_proxy=entries, no_proxy_source=no_proxy_source
    )


class ProxySetupError(httpx.ProxyError):
    """The proxy setting itself cannot be used (a SOCKS proxy without socksio, a bad URL)."""
