"""Network failures explained: the real cause of an httpx error in words, and whether to retry.

`describe_failure` names which host's certificate is not trusted, expired or for another name;
which proxy (without its password) refused, wants a password (407) or cannot be reached.

This is the one place an httpx network error becomes talkie's `TransportError`: a block that
talks to the network runs inside `network_errors(where)`, and code that must report the
failure in another form (a conformance verdict, a voice error) takes the words from
`describe_transport_error`.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from talkie_tui.core.errors import TransportError
from talkie_tui.i18n import _
from talkie_tui.protocol.net.proxies import PROXY_EXTENSION, ProxySetting, ProxySetupError
from talkie_tui.protocol.net.trust import trust_store

__all__ = ["describe_failure", "describe_transport_error", "network_errors"]

# OpenSSL's X509_V_ERR_* codes; every other verification failure is "not trusted".
_EXPIRED, _NOT_YET_VALID, _REVOKED = 10, 9, 23
_NAME_MISMATCH = {62, 64}


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
    trust_problem = False
    if code == _EXPIRED or (code is None and "expired" in lowered):
        text = _(
            "The TLS certificate of {host} has expired ({detail}). The server's operator must "
            "renew it (or this computer's clock is wrong)."
        )
    elif code == _NOT_YET_VALID:
        text = _("The TLS certificate of {host} is not valid yet ({detail}). Check the clock.")
    elif code in _NAME_MISMATCH or (
        code is None and ("mismatch" in lowered or "not valid for" in lowered)
    ):
        text = _(
            "The TLS certificate of {host} is for another name ({detail}). Check the address; "
            "otherwise the server is misconfigured, or something intercepts the connection."
        )
    elif code == _REVOKED:
        text = _("The TLS certificate of {host} has been revoked ({detail}).")
    else:
        text = _("The TLS certificate of {host} is not trusted ({detail}).")
        trust_problem = True
    return text.format(host=host, detail=detail), trust_problem


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
        names = {"proxy": proxy.shown, "source": proxy.where_found, "where": where}
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
    names = {"proxy": proxy.shown, "source": proxy.where_found, "where": where, "cause": cause}
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


def describe_transport_error(error: httpx.HTTPError, where: str) -> TransportError:
    """A TransportError naming the real cause of a network failure (TLS, proxy, DNS…)."""
    text, retryable = describe_failure(error, where)
    return TransportError(text, retryable=retryable)


@contextmanager
def network_errors(where: str) -> Iterator[None]:
    """Turn an httpx network failure inside the block into a TransportError about `where`.

    `where` names what was being reached (an origin). The httpx error stays the cause, for the
    debug log; anything that is not an `httpx.HTTPError` passes through untouched.
    """
    try:
        yield
    except httpx.HTTPError as error:
        raise describe_transport_error(error, where) from error
