"""Which certificates talkie trusts: the operating system's store, plus SSL_CERT_FILE/DIR.

Certificates are checked against the operating system's trust store, so a company CA that IT
installed there is trusted: truststore's OS verifier on macOS and Windows, the system CA bundle
on Linux (see `_build_context`). `SSL_CERT_FILE` / `SSL_CERT_DIR` add certificates *in addition
to* the system store (see `ssl_context`).
"""

from __future__ import annotations

import os
import ssl
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

import truststore

from talkie_tui.i18n import _

__all__ = ["CertificateFile", "TrustStore", "ssl_context", "trust_store"]

# The system CA bundle on Linux and the BSDs when OpenSSL's compiled-in default is missing,
# as in standalone Python builds (the same candidates truststore tries).
_CA_FILE_CANDIDATES = (
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/ca-bundle.pem",
)


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
