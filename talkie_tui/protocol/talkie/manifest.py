"""Discovery (§1): from what the user typed to a validated manifest and resolvable endpoints."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from talkie_tui.core.errors import AddressRefused, DiscoveryError
from talkie_tui.core.urls import is_loopback_host, origin_of
from talkie_tui.i18n import _
from talkie_tui.protocol.net.addresses import check_secure, service_url
from talkie_tui.protocol.net.failures import describe_transport_error, network_errors
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.protocol.talkie.errors import error_from_response
from talkie_tui.protocol.talkie.models import Manifest

__all__ = [
    "MANIFEST_PATH",
    "MAX_MANIFEST_BYTES",
    "DiscoveredServer",
    "ForeignEndpointError",
    "ManifestCache",
    # Kept importable from here for older callers; they live in addresses.py and failures.py.
    "check_secure",
    "check_signaling_url",
    "describe_transport_error",
    "discover_address",
    "fetch_manifest",
    "manifest_url_for",
    "resolve_endpoint",
]

MANIFEST_PATH = "/.well-known/talkie.json"
MAX_MANIFEST_BYTES = 64 * 1024
DEFAULT_MAX_AGE = 3600.0
MAX_REDIRECTS = 5
_SPEC = re.compile(r"^talkie/1(?:\.\d+)*$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ForeignEndpointError(DiscoveryError):
    """An endpoint lives on another origin and the user has not accepted it."""

    def __init__(self, name: str, origin: str) -> None:
        super().__init__(
            _(
                "The server's '{name}' endpoint is on another site ({origin}). "
                "It is used only after you accept it."
            ).format(name=name, origin=origin)
        )
        self.name = name
        self.origin = origin


# --- addresses and origins -----------------------------------------------------------------


def check_signaling_url(url: str, allowed_hosts: object, *, allow_http: bool = False) -> None:
    """Refuse a voice signaling URL that is not https on a host the manifest lists (§10.1).

    The client secret goes to this URL and nowhere else; plain http is accepted only for a
    loopback provider behind the development switch (`allow_http`).
    """
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise AddressRefused(
            _("The voice signaling address {url} is not valid.").format(url=repr(url))
        ) from None
    hosts = (
        [h.lower() for h in allowed_hosts if isinstance(h, str)]
        if isinstance(allowed_hosts, list)
        else []
    )
    host = parsed.host.lower()
    if not host or host not in hosts:
        listed = ", ".join(hosts) or _("none")
        raise AddressRefused(
            _(
                "The voice provider {host} is not one the server lists for voice "
                "(signalingHosts: {listed}); voice was not started."
            ).format(host=repr(host or url), listed=listed)
        )
    if parsed.scheme == "https":
        return
    if parsed.scheme == "http" and is_loopback_host(host) and allow_http:
        return
    text = _("The voice provider address {origin} is not https; voice was not started.")
    if is_loopback_host(host):
        text += " " + _("(A provider on this computer needs the development switch.)")
    raise AddressRefused(text.format(origin=origin_of(parsed)))


def manifest_url_for(address: str, *, allow_private_http: bool = False) -> httpx.URL:
    """The manifest URL for `host[:port]`, an origin URL, or a full manifest URL."""
    url = service_url(address, allow_private_http=allow_private_http)
    if url.path in ("", "/") and not url.query:
        url = url.copy_with(path=MANIFEST_PATH, query=None, fragment=None)
    return url.copy_with(fragment=None)


# --- endpoints -----------------------------------------------------------------------------


def _encode_segment(value: str) -> str:
    encoded = quote(value, safe="")
    # "." and ".." would be folded away by URL normalisation: keep them as data.
    return encoded.replace(".", "%2E") if set(value) <= {"."} else encoded


def resolve_endpoint(issuer: str, template: str, params: Mapping[str, str] | None = None) -> str:
    """Resolve a path template against the issuer origin, URL-encoding each `{name}`."""
    params = params or {}

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            raise DiscoveryError(
                _("The endpoint '{template}' needs a value for '{name}'.").format(
                    template=template, name=name
                )
            )
        return _encode_segment(str(params[name]))

    path = _PLACEHOLDER.sub(fill, template)
    if path.startswith("//"):
        return f"{httpx.URL(issuer).scheme}:{path}"
    if "://" in path.split("?", 1)[0]:
        return path
    return issuer + (path if path.startswith("/") else "/" + path)


# --- the discovered server -----------------------------------------------------------------


@dataclass
class DiscoveredServer:
    """A validated manifest, where it came from, and which foreign endpoints it declares."""

    manifest: Manifest
    manifest_url: str
    origin: str
    fetched_at: float
    max_age: float
    foreign_endpoints: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    accepted_origins: set[str] = field(default_factory=set)

    @property
    def server_id(self) -> str:
        """The stable key for tokens and settings."""
        return self.manifest.server_id

    def is_fresh(self, now: float) -> bool:
        """True while the cached manifest may still be used."""
        return now - self.fetched_at < self.max_age

    def has_endpoint(self, name: str) -> bool:
        """True when the server declares the endpoint."""
        return name in self.manifest.endpoints

    def endpoint(self, name: str, /, **params: str) -> str:
        """The absolute URL of an endpoint; a foreign one only after the user accepted it."""
        template = self.manifest.endpoints.get(name)
        if template is None:
            raise DiscoveryError(_("This server does not offer '{name}'.").format(name=name))
        url = resolve_endpoint(self.origin, template, params)
        try:
            target = origin_of(url)
        except (httpx.InvalidURL, TypeError):
            raise DiscoveryError(
                _("The server's '{name}' endpoint is not a usable address ({template}).").format(
                    name=name, template=repr(template)
                )
            ) from None
        if target != self.origin and target not in self.accepted_origins:
            raise ForeignEndpointError(name, target)
        return url


def _foreign_endpoints(origin: str, endpoints: Mapping[str, str]) -> dict[str, str]:
    foreign: dict[str, str] = {}
    for name, template in endpoints.items():
        probe = _PLACEHOLDER.sub("x", template)
        url = resolve_endpoint(origin, probe)
        try:
            target = origin_of(url)
        except (httpx.InvalidURL, TypeError):
            target = url
        if target != origin:
            foreign[name] = target
    return foreign


def _max_age(cache_control: str) -> float:
    directives = [part.strip().lower() for part in cache_control.split(",") if part.strip()]
    if any(d in ("no-store", "no-cache") for d in directives):
        return 0.0
    for directive in directives:
        name, _equals, value = directive.partition("=")
        if name == "max-age":
            try:
                return max(0.0, float(value.strip('"')))
            except ValueError:
                break
    return DEFAULT_MAX_AGE


def _canonical_issuer(issuer: str) -> str:
    try:
        url = httpx.URL(issuer)
    except (httpx.InvalidURL, TypeError):
        raise DiscoveryError(
            _("The manifest's issuer '{issuer}' is not a URL.").format(issuer=issuer)
        ) from None
    if url.scheme not in ("http", "https") or not url.host or url.path not in ("", "/"):
        raise DiscoveryError(
            _("The manifest's issuer '{issuer}' is not an origin (scheme://host).").format(
                issuer=issuer
            )
        )
    return origin_of(url)


def validate_manifest(data: object, served_from: str) -> tuple[Manifest, list[str]]:
    """Apply the §1 rules to a decoded manifest served from the origin `served_from`."""
    if not isinstance(data, dict) or "spec" not in data:
        raise DiscoveryError(
            _("{origin} is not a Talkie server (its manifest has no 'spec').").format(
                origin=served_from
            )
        )
    spec = data["spec"]
    if not isinstance(spec, str) or not _SPEC.match(spec):
        raise DiscoveryError(
            _(
                "{origin} speaks '{spec}', but this client speaks talkie/1. "
                "Update talkie or ask the server's operator."
            ).format(origin=served_from, spec=spec)
        )
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'manifest'}: {e['msg']}" for e in error.errors()
        )
        raise DiscoveryError(
            _("The manifest of {origin} is invalid: {problems}.").format(
                origin=served_from, problems=problems
            )
        ) from None
    issuer = _canonical_issuer(manifest.issuer)
    if issuer != served_from:
        raise DiscoveryError(
            _(
                "The manifest says it belongs to {issuer} but was served by {origin}; "
                "Talkie refuses a manifest from another origin."
            ).format(issuer=issuer, origin=served_from)
        )
    warnings = []
    brand = data.get("brand")
    if isinstance(brand, dict) and "accent" in brand and manifest.brand.accent is None:
        warnings.append(_("The server's accent colour is not #rrggbb and was ignored."))
    if manifest.auth.oauth is None and manifest.auth.token is None:
        warnings.append(_("The server offers no sign-in method; requests are sent without one."))
    return manifest.model_copy(update={"issuer": issuer}), warnings


def _manifest_too_large(limit: int) -> DiscoveryError:
    text = _("The manifest is larger than {size} kB; refused.")
    return DiscoveryError(text.format(size=limit // 1024))


async def _read_capped(response: httpx.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _manifest_too_large(limit)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise _manifest_too_large(limit)
    return bytes(body)


async def fetch_manifest(
    http: httpx.AsyncClient,
    url: httpx.URL | str,
    *,
    allow_private_http: bool = False,
    clock: Callable[[], float] = time.time,
) -> DiscoveredServer:
    """Fetch and validate a manifest, following same-origin redirects only."""
    url = httpx.URL(url)
    check_secure(url, allow_private_http=allow_private_http)
    start_origin = origin_of(url)
    for _redirect in range(MAX_REDIRECTS + 1):
        with network_errors(start_origin):
            async with http.stream(
                "GET", url, headers={"Accept": "application/json"}, follow_redirects=False
            ) as response:
                if response.is_redirect:
                    location = response.headers.get("location", "")
                    target = url.join(location)
                    if origin_of(target) != start_origin:
                        raise DiscoveryError(
                            _(
                                "{origin} redirects to another site ({target}). Talkie does not "
                                "follow a manifest to another origin; connect to that address "
                                "directly if you trust it."
                            ).format(origin=start_origin, target=origin_of(target))
                        )
                    url = target
                    continue
                if response.status_code == 404:
                    raise DiscoveryError(
                        _("{origin} is not a Talkie server (no {path}, HTTP 404).").format(
                            origin=start_origin, path=MANIFEST_PATH
                        )
                    )
                if not response.is_success:
                    await response.aread()
                    error = error_from_response(response)
                    raise DiscoveryError(
                        _("{origin} could not serve its manifest: {error}").format(
                            origin=start_origin, error=error.message
                        ),
                        retryable=error.retryable,
                    )
                body = await _read_capped(response, MAX_MANIFEST_BYTES)
                max_age = _max_age(response.headers.get("cache-control", ""))
        break
    else:
        raise DiscoveryError(_("{origin} redirects too many times.").format(origin=start_origin))
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise DiscoveryError(
            _("{origin} is not a Talkie server (its manifest is not JSON).").format(
                origin=start_origin
            )
        ) from None
    manifest, warnings = validate_manifest(data, start_origin)
    return DiscoveredServer(
        manifest=manifest,
        manifest_url=str(url),
        origin=start_origin,
        fetched_at=clock(),
        max_age=max_age,
        foreign_endpoints=_foreign_endpoints(start_origin, manifest.endpoints),
        warnings=warnings,
    )


class ManifestCache:
    """Manifests by URL, kept as long as their Cache-Control allows (1 hour by default)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._entries: dict[str, DiscoveredServer] = {}

    def get(self, url: httpx.URL | str) -> DiscoveredServer | None:
        """The cached manifest for `url`, if it is still fresh."""
        entry = self._entries.get(str(url))
        if entry is not None and entry.is_fresh(self._clock()):
            return entry
        return None

    def put(self, url: httpx.URL | str, server: DiscoveredServer) -> None:
        """Remember a manifest (a max-age of 0 is not kept)."""
        if server.max_age > 0:
            self._entries[str(url)] = server

    def invalidate(self, url: httpx.URL | str) -> None:
        """Forget a manifest, e.g. after a 401 or 404 from one of its endpoints."""
        self._entries.pop(str(url), None)

    async def discover(
        self, http: httpx.AsyncClient, url: httpx.URL | str, *, allow_private_http: bool = False
    ) -> DiscoveredServer:
        """The cached manifest, or a fresh fetch."""
        cached = self.get(url)
        if cached is not None:
            return cached
        server = await fetch_manifest(
            http, url, allow_private_http=allow_private_http, clock=self._clock
        )
        self.put(url, server)
        return server


async def discover_address(
    address: str,
    *,
    cache: ManifestCache,
    http: httpx.AsyncClient | None = None,
    allow_private_http: bool = False,
    accepted_origins: set[str] | None = None,
) -> tuple[DiscoveredServer, httpx.AsyncClient, bool]:
    """Discover the server at `address` (§1): the server, the HTTP client its manifest came
    through (`http`, else a new one, closed here when discovery fails), and whether it is new."""
    own_http = http is None
    http = http or make_http_client()
    try:
        url = manifest_url_for(address, allow_private_http=allow_private_http)
        server = await cache.discover(http, url, allow_private_http=allow_private_http)
    except BaseException:
        if own_http:
            await http.aclose()
        raise
    server.accepted_origins |= accepted_origins or set()
    return server, http, own_http
