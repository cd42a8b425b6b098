"""The one place talkie makes HTTP clients: redirects, timeouts, proxies, trust store, failures.

Every client talkie opens comes from `make_http_client`, so all of them behave alike on a
corporate network:

- **Proxies** come from the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, lower case
  too, lower case first) or, when it names none, from the system settings that
  `urllib.request.getproxies()` reads on macOS and Windows (their exception lists and PAC
  files are not read: set NO_PROXY). `NO_PROXY` lists hosts to reach
  directly: names (`example.com` also covers its subdomains, so does `.example.com`), IP
  addresses, CIDR ranges (`10.0.0.0/8`), an optional `:port`, or `*` for everything.
  Loopback addresses (`localhost`, `*.localhost`, `127.0.0.0/8`, `::1`) always go direct,
  as in Go's net/http: a proxy elsewhere cannot reach this computer's loopback, and that is
  where `talkie demo`, development servers and the voice test provider live.
- **Certificates** are checked against the operating system's trust store, so a company CA
  that IT installed there is trusted: truststore's OS verifier on macOS and Windows, the
  system CA bundle on Linux (see `_build_context`). `SSL_CERT_FILE` / `SSL_CERT_DIR` add
  certificates *in addition to* the system store (see `ssl_context`).
- **Failures** are explained by `describe_failure`: which host's certificate is not trusted,
  expired or for another name; which proxy (without its password) refused, wants a password
  (407) or cannot be reached.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import socket
import ssl
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import truststore

from talkie_tui.i18n import N_, _, accept_language

__all__ = [
    "DEFAULT_TIMEOUT",
    "USER_AGENT",
    "CertificateFile",
    "ProxySetting",
    "ProxySettings",
    "ProxySetupError",
    "TrustStore",
    "describe_failure",
    "make_http_client",
    "mask_url",
    "proxy_settings",
    "ssl_context",
    "trust_store",
]

USER_AGENT = "talkie-tui/0.1 (talkie/1)"
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)
# Where the request records which proxy carried it, for `describe_failure`.
PROXY_EXTENSION = "talkie.proxy"
# The `source` of a proxy found in the operating system's settings (translated where shown).
SYSTEM_SETTINGS = N_("system settings")

log = logging.getLogger("talkie_tui.http")

# The system CA bundle on Linux and the BSDs when OpenSSL's compiled-in default is missing,
# as in standalone Python builds (the same candidates truststore tries).
_CA_FILE_CANDIDATES = (
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/ca-bundle.pem",
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


# --- proxies ---------------------------------------------------------------------------------


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


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
        if proxy is None or _is_loopback(url.host):
            return None
        host = url.host.strip("[]").lower().rstrip(".")
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


# --- certificates ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CertificateFile:
    """A certificate file or folder named by SSL_CERT_FILE / SSL_CERT_DIR, and how it loaded."""

    variable: str
    path: str
    problem: str = ""
    """Why it could not be used; empty when it was loaded."""
    certificates: int | None = None
    """How many CA certificates a file holds (None for a folder: read on demand)."""


@dataclass(frozen=True)
class TrustStore:
    """Where trusted CA certificates come from: the system store plus any named files."""

    system: str
    extra: tuple[CertificateFile, ...] = field(default_factory=tuple)


def _uses_os_verifier() -> bool:
    """True where truststore checks certificates with the OS (macOS, Windows)."""
    return sys.platform == "darwin" or sys.platform == "win32"


def _system_bundle() -> str | None:
    """The CA bundle of OpenSSL on this system, ignoring SSL_CERT_FILE."""
    compiled = ssl.get_default_verify_paths().openssl_cafile
    for candidate in (compiled, *_CA_FILE_CANDIDATES):
        if candidate and os.path.isfile(candidate):
            return candidate
    return None


def _system_folder() -> str | None:
    """OpenSSL's folder of hashed CA certificates, ignoring SSL_CERT_DIR."""
    folder = ssl.get_default_verify_paths().openssl_capath
    return folder if folder and os.path.isdir(folder) else None


def _system_description() -> str:
    if sys.platform == "darwin":
        return _("the macOS keychain (system trust settings)")
    if sys.platform == "win32":
        return _("the Windows certificate store")
    bundle = _system_bundle()
    if bundle:
        return _("the system store ({bundle})").format(bundle=bundle)
    return _("the system store (no CA bundle found!)")


def _same_file(a: str, b: str | None) -> bool:
    return b is not None and os.path.realpath(a) == os.path.realpath(b)


def _load_extra(context: ssl.SSLContext, environ: Mapping[str, str]) -> list[CertificateFile]:
    """Load SSL_CERT_FILE / SSL_CERT_DIR into `context`; report what each gave."""
    loaded: list[CertificateFile] = []
    for variable, is_dir in (("SSL_CERT_FILE", False), ("SSL_CERT_DIR", True)):
        path = environ.get(variable, "").strip()
        if not path:
            continue
        if not (os.path.isdir(path) if is_dir else os.path.isfile(path)):
            missing = _("there is no such folder") if is_dir else _("there is no such file")
            loaded.append(CertificateFile(variable, path, missing))
            continue
        if is_dir:
            # Certificates in a folder are read when a handshake needs them.
            if _uses_os_verifier() or not _same_file(path, _system_folder()):
                context.load_verify_locations(capath=path)
            loaded.append(CertificateFile(variable, path))
            continue
        try:
            with open(path, "rb") as file:
                count = file.read().count(b"-----BEGIN CERTIFICATE-----")
            # OpenSSL 3.0 needs ~80 ms to load a full bundle: not twice when it is the system's.
            if _uses_os_verifier() or not _same_file(path, _system_bundle()):
                context.load_verify_locations(cafile=path)
        except (ssl.SSLError, OSError, ValueError) as error:
            problem = _("it holds no usable PEM certificate ({error})").format(error=error)
            loaded.append(CertificateFile(variable, path, problem))
            continue
        problem = "" if count else _("it holds no PEM certificate")
        loaded.append(CertificateFile(variable, path, problem, count))
    return loaded


def _build_context(
    trust_env: bool, environ: Mapping[str, str]
) -> tuple[ssl.SSLContext, TrustStore]:
    context: ssl.SSLContext
    if _uses_os_verifier():
        context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    else:
        # truststore on Linux *is* OpenSSL's system bundle, but it reloads it before every
        # handshake (~80 ms with OpenSSL 3.0, and on 3.0-3.3 the lookups pile up over a long
        # session: truststore issue #212). Same trust, loaded once.
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        bundle, folder = _system_bundle(), _system_folder()
        if bundle or folder:
            context.load_verify_locations(cafile=bundle, capath=folder)
    extra = _load_extra(context, environ) if trust_env else []
    return context, TrustStore(_system_description(), tuple(extra))


_contexts: dict[tuple[object, ...], tuple[ssl.SSLContext, TrustStore]] = {}
_contexts_lock = threading.Lock()


def _context_key(trust_env: bool, environ: Mapping[str, str]) -> tuple[object, ...]:
    key: list[object] = [trust_env]
    if trust_env:
        for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
            path = environ.get(variable, "").strip()
            try:
                changed = os.stat(path).st_mtime_ns if path else None
            except OSError:
                changed = None
            key += [path, changed]
    return tuple(key)


def _cached_context(
    trust_env: bool = True, environ: Mapping[str, str] | None = None
) -> tuple[ssl.SSLContext, TrustStore]:
    environ = os.environ if environ is None else environ
    key = _context_key(trust_env, environ)
    with _contexts_lock:
        # Contexts are shared by every client of the process (they are thread-safe), so the
        # CA bundle is parsed once, not once per client.
        if key not in _contexts:
            if len(_contexts) > 8:
                _contexts.clear()
            _contexts[key] = _build_context(trust_env, environ)
        return _contexts[key]


def ssl_context(*, trust_env: bool = True) -> ssl.SSLContext:
    """The TLS context of every client: the system trust store, plus SSL_CERT_FILE/DIR.

    The files are added to the system store, not used instead of it: the usual advice for a
    TLS-inspecting proxy is "set SSL_CERT_FILE to the company CA", and that file often holds
    the company root alone. Used instead, every host the proxy does not re-sign (NO_PROXY
    hosts, sites it leaves alone) would stop working; added, it only widens trust to the
    certificates the user named. (Plain OpenSSL reads SSL_CERT_FILE *instead of* its bundle,
    so the system bundle is loaded by its own path; truststore's macOS and Windows
    verifiers treat loaded certificates as extra anchors.) `trust_env=False`: the system
    store alone.
    """
    return _cached_context(trust_env)[0]


def trust_store(environ: Mapping[str, str] | None = None) -> TrustStore:
    """Where certificates are trusted from, and whether SSL_CERT_FILE/DIR could be used."""
    return _cached_context(True, environ)[1]


# --- the client ------------------------------------------------------------------------------


class _Router(httpx.AsyncBaseTransport):
    """Sends each request direct or through the proxy its URL calls for, and logs it."""

    def __init__(
        self,
        direct: httpx.AsyncBaseTransport,
        proxies: ProxySettings | None,
        context: ssl.SSLContext,
        limits: httpx.Limits,
    ) -> None:
        self._direct = direct
        self._proxies = proxies
        self._context = context
        self._limits = limits
        self._through: dict[str, httpx.AsyncBaseTransport] = {}

    def _transport_for(
        self, proxy: ProxySetting | None, request: httpx.Request
    ) -> httpx.AsyncBaseTransport:
        if proxy is None:
            return self._direct
        transport = self._through.get(proxy.url)
        if transport is None:
            # Built on first use, so a broken proxy setting fails the request that needs it
            # (with a message naming it), not every client.
            try:
                url = proxy.normalized
                # TLS to the proxy itself (an https:// proxy) trusts what the server does.
                tls = self._context if url.lower().startswith("https://") else None
                target = httpx.Proxy(url, ssl_context=tls)
                transport = httpx.AsyncHTTPTransport(
                    verify=self._context, proxy=target, limits=self._limits
                )
            except ImportError:
                text = _(
                    "{source} names a SOCKS proxy ({proxy}), which needs the 'socksio' package "
                    "(pip install 'httpx[socks]')"
                )
                raise ProxySetupError(
                    text.format(source=_source(proxy), proxy=proxy.shown), request=request
                ) from None
            except (ValueError, httpx.InvalidURL) as error:
                text = _("{source} is not a proxy address talkie can use ({proxy}: {error})")
                raise ProxySetupError(
                    text.format(source=_source(proxy), proxy=proxy.shown, error=error),
                    request=request,
                ) from None
            self._through[proxy.url] = transport
        return transport

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` on its way; a proxy's own 407 becomes a ProxyError."""
        proxy = self._proxies.proxy_for(request.url) if self._proxies else None
        if proxy is not None:
            request.extensions[PROXY_EXTENSION] = proxy
        via = f" via proxy {proxy.shown}" if proxy else ""
        started = time.perf_counter()
        try:
            response = await self._transport_for(proxy, request).handle_async_request(request)
        except httpx.HTTPError as error:
            took = (time.perf_counter() - started) * 1000
            log.debug(
                "%s %s%s failed after %.0f ms: %s: %s",
                request.method, request.url, via, took, type(error).__name__, error,
            )  # fmt: skip
            raise
        took = (time.perf_counter() - started) * 1000
        log.debug(
            "%s %s%s -> %d (headers after %.0f ms)",
            request.method, request.url, via, response.status_code, took,
        )  # fmt: skip
        if proxy is not None and response.status_code == 407 and request.url.scheme == "http":
            # Plain http goes to the proxy as a normal request, so its 407 arrives as a
            # response; a tunnel's 407 (https) is already a ProxyError.
            await response.aclose()
            raise httpx.ProxyError("407 Proxy Authentication Required", request=request)
        return response

    async def aclose(self) -> None:
        """Close the direct connections and those through every proxy used."""
        await self._direct.aclose()
        for transport in self._through.values():
            await transport.aclose()


async def _ask_for_language(request: httpx.Request) -> None:
    """Servers word their errors "in the user's language" (§3): tell them which it is."""
    if "Accept-Language" not in request.headers:
        request.headers["Accept-Language"] = accept_language()


def make_http_client(
    *,
    timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
    follow_redirects: bool = False,
    headers: Mapping[str, str] | None = None,
    trust_env: bool = True,
    verify: ssl.SSLContext | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    limits: httpx.Limits = DEFAULT_LIMITS,
    **options: Any,
) -> httpx.AsyncClient:
    """An AsyncClient as every part of talkie needs it (see the module docstring).

    Redirects are not followed unless asked (a manifest or token must not wander to another
    origin). `trust_env=False` ignores proxies and SSL_CERT_FILE/DIR. A `transport` given by
    the caller (tests) is used as is, without proxies.
    """
    context = verify or ssl_context(trust_env=trust_env)
    proxies = proxy_settings() if trust_env and transport is None else None
    direct = transport or httpx.AsyncHTTPTransport(verify=context, limits=limits)
    hooks = options.pop("event_hooks", {})
    hooks = {**hooks, "request": [_ask_for_language, *hooks.get("request", [])]}
    return httpx.AsyncClient(
        event_hooks=hooks,
        follow_redirects=follow_redirects,
        timeout=timeout,
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        # The environment is read here (proxies, certificates), not by httpx, so that
        # loopback always goes direct and SSL_CERT_FILE adds to the system store.
        trust_env=False,
        transport=_Router(direct, proxies, context, limits),
        **options,
    )


# --- explaining failures ---------------------------------------------------------------------

# OpenSSL's X509_V_ERR_* codes; every other verification failure is "not trusted".
_EXPIRED, _NOT_YET_VALID, _REVOKED = 10, 9, 23
_NAME_MISMATCH = {62, 64}


class ProxySetupError(httpx.ProxyError):
    """The proxy setting itself cannot be used (a SOCKS proxy without socksio, a bad URL)."""


def _causes(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _request_of(error: httpx.HTTPError) -> httpx.Request | None:
    try:
        return error.request
    except RuntimeError:
        return None


def _socket_cause(chain: list[BaseException], fallback: str, name: str) -> str:
    """The operating system's reason under a connect failure, in words."""
    for error in chain:
        if isinstance(error, ConnectionRefusedError):
            return _("connection refused")
        if isinstance(error, socket.gaierror):
            return _("the name {name} was not found ({error})").format(
                name=name, error=error.strerror or error
            )
        if isinstance(error, OSError) and error.strerror:
            return error.strerror[0].lower() + error.strerror[1:]
    return fallback


def _certificate_problem(verify: ssl.SSLCertVerificationError, host: str) -> tuple[str, bool]:
    """(what is wrong with the certificate of `host`, whether it is a trust problem)."""
    code = getattr(verify, "verify_code", None)
    detail = str(getattr(verify, "verify_message", "") or verify.reason or verify).rstrip(".")
    lowered = detail.lower()
    if code == _EXPIRED or (code is None and "expired" in lowered):
        text = _(
            "The TLS certificate of {host} has expired ({detail}). The server's operator must "
            "renew it (or this computer's clock is wrong)."
        )
        return text.format(host=host, detail=detail), False
    if code == _NOT_YET_VALID:
        text = _("The TLS certificate of {host} is not valid yet ({detail}). Check the clock.")
        return text.format(host=host, detail=detail), False
    if code in _NAME_MISMATCH or (
        code is None and ("mismatch" in lowered or "not valid for" in lowered)
    ):
        text = _(
            "The TLS certificate of {host} is for another name ({detail}). Check the address; "
            "otherwise the server is misconfigured, or something intercepts the connection."
        )
        return text.format(host=host, detail=detail), False
    if code == _REVOKED:
        text = _("The TLS certificate of {host} has been revoked ({detail}).")
        return text.format(host=host, detail=detail), False
    text = _("The TLS certificate of {host} is not trusted ({detail}).")
    return text.format(host=host, detail=detail), True


def _trust_hint(proxy: ProxySetting | None) -> str:
    """What to do about an untrusted certificate, given SSL_CERT_FILE and the proxy."""
    hint = (
        " "
        + _("The proxy {proxy} may be re-signing it (TLS inspection).").format(proxy=proxy.shown)
        if proxy
        else ""
    )
    store = trust_store()
    broken = [f for f in store.extra if f.problem]
    if broken:
        first = broken[0]
        return (
            hint
            + " "
            + _("{variable} ({path}) could not be used: {problem}.").format(
                variable=first.variable, path=first.path, problem=first.problem
            )
        )
    if store.extra:
        named = store.extra[0]
        return (
            hint
            + " "
            + _(
                "{variable} ({path}) is trusted as well, but holds no CA that signed it; if your "
                "company inspects TLS traffic, point it at your company's CA bundle."
            ).format(variable=named.variable, path=named.path)
        )
    if proxy:
        return hint + " " + _("If so, set SSL_CERT_FILE to your company's CA bundle.")
    return " " + _(
        "If your company inspects TLS traffic, set SSL_CERT_FILE to your company's CA bundle."
    )


def _source(proxy: ProxySetting) -> str:
    """Where a proxy setting was found, in the UI's language (a variable name stays as is)."""
    return _(SYSTEM_SETTINGS) if proxy.source == SYSTEM_SETTINGS else proxy.source


def describe_failure(error: httpx.HTTPError, where: str) -> tuple[str, bool]:
    """The real cause of a network failure in words, and whether retrying may help.

    `where` names what was being reached (an origin, or "The voice provider").
    """
    request = _request_of(error)
    host = request.url.host if request is not None and request.url.host else where
    extension = request.extensions.get(PROXY_EXTENSION) if request is not None else None
    proxy = extension if isinstance(extension, ProxySetting) else None
    cause = str(error) or type(error).__name__
    chain = list(_causes(error))

    verify = next((e for e in chain if isinstance(e, ssl.SSLCertVerificationError)), None)
    if verify is not None:
        text, untrusted = _certificate_problem(verify, host)
        return text + (_trust_hint(proxy) if untrusted else ""), False
    if "CERTIFICATE_VERIFY_FAILED" in cause:
        text = _("The TLS certificate of {host} is not trusted: {cause}.")
        return text.format(host=host, cause=cause) + _trust_hint(proxy), False
    tls = next((e for e in chain if isinstance(e, ssl.SSLError)), None)
    if tls is not None:
        reason = tls.reason or str(tls)
        if reason == "WRONG_VERSION_NUMBER":
            text = _("{where} did not answer with TLS: is it really https? ({reason})")
            return text.format(where=where, reason=reason), False
        text = _("The TLS connection to {host} failed ({reason}).")
        return text.format(host=host, reason=reason), True

    if isinstance(error, ProxySetupError):
        return f"{cause}.", False
    if isinstance(error, httpx.ProxyError):
        return _proxy_refusal(cause, where, proxy), not cause.startswith("407")
    if proxy is not None:
        names = {"proxy": proxy.shown, "source": _source(proxy), "where": where}
        if isinstance(error, httpx.ConnectTimeout):
            text = _("The proxy {proxy} (from {source}) did not answer in time.")
            return text.format(**names), True
        if isinstance(error, httpx.ConnectError):
            reason = _socket_cause(chain, cause, httpx.URL(proxy.normalized).host)
            text = _(
                "Could not reach the proxy {proxy} (from {source}) to connect to {where}: "
                "{reason}. Check the proxy setting (`talkie doctor` shows it)."
            )
            return text.format(reason=reason, **names), True
        if isinstance(error, httpx.TimeoutException):
            text = _("{where} did not answer in time through the proxy {proxy} (from {source}).")
            return text.format(**names), True
        text = _(
            "The connection to {where} through the proxy {proxy} (from {source}) failed: {cause}"
        )
        return text.format(cause=cause, **names), True

    if isinstance(error, httpx.TimeoutException):
        text = _("{where} did not answer in time ({error}).")
        return text.format(where=where, error=type(error).__name__), True
    if isinstance(error, httpx.ConnectError):
        text = _("Could not connect to {where}: {reason}.")
        return text.format(where=where, reason=_socket_cause(chain, cause, host)), True
    return _("The connection to {where} failed: {cause}").format(where=where, cause=cause), True


def _proxy_refusal(cause: str, where: str, proxy: ProxySetting | None) -> str:
    if proxy is None:
        return _("The proxy refused the connection to {where}: {cause}").format(
            where=where, cause=cause
        )
    names = {"proxy": proxy.shown, "source": _source(proxy), "where": where, "cause": cause}
    status = cause[:3] if cause[:3].isdigit() else ""
    if status == "407":
        if proxy.has_credentials:
            text = _(
                "The proxy {proxy} refused the user name and password in {source} "
                "(HTTP 407 Proxy Authentication Required)."
            )
            return text.format(**names)
        text = _(
            "The proxy {proxy} wants a user name and password (HTTP 407 Proxy "
            "Authentication Required): put them in {source}, as "
            "http://user:password@host:port."
        )
        return text.format(**names)
    if status:
        text = _("The proxy {proxy} (from {source}) refused to connect to {where} (HTTP {cause}).")
        return text.format(**names)
    return _("The proxy {proxy} (from {source}) failed: {cause}.").format(**names)
