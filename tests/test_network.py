"""Corporate networks: proxies from the environment, the system trust store plus SSL_CERT_FILE,
and failures that name their real cause (issue 6, item 3).

A forward proxy on 127.0.0.1 (below) carries talkie's requests and records them. Loopback
addresses always go direct (protocol/http.py), so the tests address the servers behind the
proxy by names only the proxy resolves (`talkie-crm.local`, `talkie.test`): with a proxy the
client never resolves the target itself, so the names need no DNS or /etc/hosts entry.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import io
import ipaddress
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from talkie_tui.commands.ask import ask
from talkie_tui.core.errors import TransportError
from talkie_tui.protocol.net import trust
from talkie_tui.protocol.net.http import make_http_client
from talkie_tui.protocol.net.proxies import mask_url, proxy_settings
from talkie_tui.protocol.net.trust import trust_store
from talkie_tui.protocol.talkie import client as protocol_client
from talkie_tui.protocol.talkie.manifest import fetch_manifest
from tests.helpers import TEST_TOKEN

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD")


@pytest.fixture(autouse=True)
def _clean_network_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or CA variable of the machine running the suite leaks into these tests."""
    for name in (*_PROXY_VARIABLES, "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


# --- a forward proxy ------------------------------------------------------------------------


@dataclass
class Forwarded:
    """One request the proxy carried: `CONNECT host:port` or `GET http://host:port/path`."""

    method: str
    target: str


class ForwardProxy:
    """An HTTP forward proxy on 127.0.0.1, in its own thread: CONNECT tunnels (https) and
    absolute-form requests (plain http). `hosts` maps the names clients ask for to where the
    servers really are; `forwarded` records every request carried. With `credentials`, a
    request without them gets 407."""

    def __init__(
        self, hosts: dict[str, str] | None = None, credentials: tuple[str, str] | None = None
    ) -> None:
        self.hosts = hosts or {}
        self.credentials = credentials
        self.forwarded: list[Forwarded] = []
        self.refused: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """`http://127.0.0.1:port`."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ForwardProxy:
        self._thread.start()
        listening = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._connection, "127.0.0.1", 0), self._loop
        )
        self._server = listening.result(5)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc_info: object) -> None:
        async def stop() -> None:
            assert self._server is not None
            self._server.close()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    def _authorized(self, headers: dict[str, str]) -> bool:
        if self.credentials is None:
            return True
        expected = base64.b64encode(":".join(self.credentials).encode()).decode()
        return headers.get("proxy-authorization") == f"Basic {expected}"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        request_line, *lines = head.split("\r\n")
        method, target, version = request_line.split(" ", 2)
        pairs = [line.split(":", 1) for line in lines if ":" in line]
        headers = {name.strip().lower(): value.strip() for name, value in pairs}
        if not self._authorized(headers):
            self.refused.append(f"{method} {target}")
            writer.write(
                b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                b'Proxy-Authenticate: Basic realm="test"\r\n'
                b"Content-Length: 0\r\nConnection: close\r\n\r\n"
            )
            await writer.drain()
            writer.close()
            return
        self.forwarded.append(Forwarded(method, target))
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up_reader, up_writer = await asyncio.open_connection(self.hosts.get(host, host), port)
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
        else:
            url = urlsplit(target)
            host = url.hostname or ""
            up_reader, up_writer = await asyncio.open_connection(
                self.hosts.get(host, host), url.port or 80
            )
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            hop_by_hop = ("proxy-authorization", "proxy-connection", "connection")
            kept = [f"{n}:{v}" for n, v in pairs if n.strip().lower() not in hop_by_hop]
            # One request per upstream connection keeps the relay a plain byte pipe.
            upstream_head = [f"{method} {path} {version}", *kept, "Connection: close", "", ""]
            up_writer.write("\r\n".join(upstream_head).encode("latin-1"))
        await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except ConnectionError:
        pass
    finally:
        sink.close()


def _free_port() -> int:
    """A port on 127.0.0.1 where nothing listens (a proxy that is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- certificates ---------------------------------------------------------------------------


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write(
    folder: Path, stem: str, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey
) -> tuple[str, str]:
    certfile, keyfile = folder / f"{stem}.pem", folder / f"{stem}.key"
    certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(certfile), str(keyfile)


def _alt_names(names: tuple[str, ...]) -> x509.SubjectAlternativeName:
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    return x509.SubjectAlternativeName(entries)


class CompanyCA:
    """A throwaway certificate authority: the "company CA" of a TLS-inspecting network."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True,
            content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, encipher_only=False, decipher_only=False,
        )  # fmt: skip
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name("Talkie Test Company CA"))
            .issuer_name(_name("Talkie Test Company CA"))
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(usage, critical=True)
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False
            )
            .sign(self.key, hashes.SHA256())
        )
        self.pem = str(folder / "company-ca.pem")
        Path(self.pem).write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, *names: str, expired: bool = False) -> tuple[str, str]:
        """A server certificate for `names` (certfile, keyfile), signed by this CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        days = datetime.timedelta(days=1)
        start, end = (now - 10 * days, now - days) if expired else (now - days, now + 30 * days)
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(names[0]))
            .issuer_name(self.cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(_alt_names(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
            .sign(self.key, hashes.SHA256())
        )
        stem = f"{names[0]}-{'expired' if expired else 'valid'}-{x509.random_serial_number()}"
        return _write(self.folder, stem, cert, key)


def self_signed(folder: Path, name: str) -> tuple[str, str]:
    """A self-signed server certificate for `name` (certfile, keyfile)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(_alt_names((name,)), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _write(folder, f"self-signed-{name}", cert, key)


@pytest.fixture(scope="module")
def company_ca(tmp_path_factory: pytest.TempPathFactory) -> CompanyCA:
    """The company CA of these tests (its PEM is what SSL_CERT_FILE points at)."""
    return CompanyCA(tmp_path_factory.mktemp("company-ca"))


# --- servers --------------------------------------------------------------------------------


@contextmanager
def reference_server_tls(db: Path, certfile: str, keyfile: str) -> Iterator[int]:
    """The reference server (test mode, dev token) on https://127.0.0.1:port; yields the port."""
    from talkie_tui.devserver.talkie.app import create_app
    from talkie_tui.devserver.talkie.config import ServerConfig

    config = ServerConfig(test_mode=True, dev_token=TEST_TOKEN, db_path=db)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config),
            host="127.0.0.1",
            port=0,
            ssl_certfile=certfile,
            ssl_keyfile=keyfile,
            log_level="critical",
            lifespan="on",
            http="h11",  # as the devservers' runner (uvicorn's "auto" would pick httptools)
            loop="asyncio",
            timeout_graceful_shutdown=1,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(1000):
        if server.started or not thread.is_alive():
            break
        threading.Event().wait(0.01)
    assert server.started, "the https reference server did not start"
    try:
        yield int(server.servers[0].sockets[0].getsockname()[1])
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[Callable[[tuple[str, str]], int]]:
    """Factory: `tls_server((certfile, keyfile)) -> port` of an https reference server."""
    with ExitStack() as stack:
        count = iter(range(100))

        def start(pair: tuple[str, str]) -> int:
            db = tmp_path / f"tls-{next(count)}.sqlite3"
            return stack.enter_context(reference_server_tls(db, *pair))

        yield start


async def _ask(address: str, **options: bool) -> tuple[int, str, str]:
    """Run `talkie ask ADDRESS "talkie-test:echo through"` in-process: (code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = await ask(
        address, "talkie-test:echo through", token=TEST_TOKEN, out=out, err=err, **options
    )
    return code, out.getvalue(), err.getvalue()


# --- proxies: which requests go through one -------------------------------------------------


def test_lower_case_wins_and_all_proxy_is_the_fallback() -> None:
    """As in urllib and curl: `https_proxy` over `HTTPS_PROXY`; ALL_PROXY for the rest."""
    settings = proxy_settings(
        {
            "HTTPS_PROXY": "http://upper:1",
            "https_proxy": "http://lower:2",
            "ALL_PROXY": "proxy.example:3128",
        }
    )
    assert settings.https is not None and settings.https.url == "http://lower:2"
    assert settings.https.source == "https_proxy"
    assert settings.http is not None and settings.http.source == "ALL_PROXY"
    # A bare host:port means an http proxy, as in curl.
    assert settings.http.normalized == "http://proxy.example:3128"


def test_http_proxy_is_ignored_under_cgi_and_an_empty_lower_case_variable_switches_off() -> None:
    """httpoxy: under CGI, HTTP_PROXY is a request header; `https_proxy=` unsets HTTPS_PROXY."""
    cgi = proxy_settings({"HTTP_PROXY": "http://evil:1", "REQUEST_METHOD": "GET"})
    assert cgi.http is None
    off = proxy_settings({"HTTPS_PROXY": "http://upper:1", "https_proxy": ""})
    assert off.https is None


@pytest.mark.parametrize(
    ("no_proxy", "url", "direct"),
    [
        ("", "https://crm.example.com", False),
        ("example.com", "https://crm.example.com", True),
        ("example.com", "https://example.com", True),
        ("example.com", "https://notexample.com", False),
        (".example.com", "https://crm.example.com", True),
        ("*.example.com", "https://crm.example.com", True),
        ("crm.example.com:8443", "https://crm.example.com:8443", True),
        ("crm.example.com:8443", "https://crm.example.com", False),
        ("10.0.0.0/8", "https://10.1.2.3", True),
        ("10.0.0.0/8", "https://11.1.2.3", False),
        ("192.168.1.5", "http://192.168.1.5:8000", True),
        ("::1,fd00::/8", "https://[fd00::5]", True),
        ("a.test, b.test", "https://b.test", True),
        ("*", "https://anything.example", True),
        # Loopback is always direct, with or without NO_PROXY.
        ("", "http://127.0.0.1:8000", True),
        ("", "http://127.0.0.2:8000", True),
        ("", "http://localhost:8000", True),
        ("", "http://talkie.localhost", True),
        ("", "http://[::1]:8000", True),
        # A name that merely resolves to loopback is not known to be loopback: proxied.
        ("", "http://talkie-crm.local:8000", False),
    ],
)
def test_no_proxy(no_proxy: str, url: str, direct: bool) -> None:
    """NO_PROXY in curl's forms plus CIDR ranges; loopback never goes through a proxy."""
    settings = proxy_settings(
        {
            "HTTPS_PROXY": "http://proxy:3128",
            "HTTP_PROXY": "http://proxy:3128",
            "NO_PROXY": no_proxy,
        }
    )
    assert (settings.proxy_for(url) is None) == direct


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://alice:s3cret@proxy:3128", "http://alice:***@proxy:3128"),
        ("http://alice@proxy:3128", "http://alice@proxy:3128"),
        ("http://:s3cret@proxy:3128", "http://***@proxy:3128"),
        ("proxy:3128", "http://proxy:3128"),
    ],
)
def test_proxy_passwords_are_masked(url: str, shown: str) -> None:
    """A proxy is named in messages and in `talkie doctor`, never with its password."""
    assert mask_url(url) == shown


# --- talkie through the proxy ---------------------------------------------------------------


async def test_ask_reaches_the_reference_server_through_the_proxy(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY: discovery and the run go through the proxy, which records them."""
    port = httpx.URL(server_url).port
    with ForwardProxy(hosts={"talkie-crm.local": "127.0.0.1"}) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        code, out, err = await _ask(f"http://talkie-crm.local:{port}", allow_private_http=True)
    assert (code, out, err) == (0, "through\n", "")
    seen = [(f.method, f.target) for f in proxy.forwarded]
    origin = f"http://talkie-crm.local:{port}"
    assert ("GET", f"{origin}/.well-known/talkie.json") in seen
    assert ("POST", f"{origin}/api/talkie/run") in seen


async def test_loopback_goes_direct_even_with_a_proxy_set(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`talkie demo` and local servers keep working when the proxy (down here) is set."""
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{_free_port()}")
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{_free_port()}")
    assert await _ask(server_url) == (0, "through\n", "")


async def test_https_through_a_tls_inspecting_proxy_with_the_company_ca(
    company_ca: CompanyCA,
    tls_server: Callable[[tuple[str, str]], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HTTPS_PROXY tunnels (CONNECT); the company CA from SSL_CERT_FILE is trusted."""
    port = tls_server(company_ca.issue("talkie.test"))
    with ForwardProxy(hosts={"talkie.test": "127.0.0.1"}) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        address = f"https://talkie.test:{port}"
        code, _, err = await _ask(address)
        assert code == 1
        assert "The TLS certificate of talkie.test is not trusted" in err
        assert f"The proxy {proxy.url} may be re-signing it" in err
        assert "set SSL_CERT_FILE to your company's CA bundle" in err

        monkeypatch.setenv("SSL_CERT_FILE", company_ca.pem)
        assert await _ask(address) == (0, "through\n", "")
    assert Forwarded("CONNECT", f"talkie.test:{port}") in proxy.forwarded


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_a_proxy_that_wants_a_password_is_named(
    scheme: str,
    server_url: str,
    company_ca: CompanyCA,
    tls_server: Callable[[tuple[str, str]], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """407 (from a tunnel, or as the answer to a plain request): the proxy and the variable
    are named, the password never; with the right credentials it works."""
    # Plain http is accepted for a LAN name (.local) behind the development switch.
    name = "talkie.test" if scheme == "https" else "talkie-crm.local"
    if scheme == "https":
        port, variable = tls_server(company_ca.issue(name)), "HTTPS_PROXY"
        monkeypatch.setenv("SSL_CERT_FILE", company_ca.pem)
    else:
        port, variable = httpx.URL(server_url).port, "HTTP_PROXY"
    address = f"{scheme}://{name}:{port}"
    hosts = {name: "127.0.0.1"}
    with ForwardProxy(hosts=hosts, credentials=("alice", "s3cret")) as proxy:
        monkeypatch.setenv(variable, proxy.url)
        code, _, err = await _ask(address, allow_private_http=True)
        assert code == 1
        assert f"The proxy {proxy.url} wants a user name and password (HTTP 407" in err
        assert f"put them in {variable}" in err and "Trying again will not help" in err

        monkeypatch.setenv(variable, f"http://alice:wrong-pass@127.0.0.1:{proxy.port}")
        code, _, err = await _ask(address, allow_private_http=True)
        assert code == 1
        assert f"The proxy http://alice:***@127.0.0.1:{proxy.port} refused the user name" in err
        assert "wrong-pass" not in err

        monkeypatch.setenv(variable, f"http://alice:s3cret@127.0.0.1:{proxy.port}")
        assert await _ask(address, allow_private_http=True) == (0, "through\n", "")
    assert proxy.refused and proxy.forwarded


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_a_proxy_that_is_down_is_named(scheme: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Connection refused by the proxy: the message names it (without its password)."""
    dead = _free_port()
    variable = f"{scheme.upper()}_PROXY"
    monkeypatch.setenv(variable, f"http://bob:hunter22@127.0.0.1:{dead}")
    code, _, err = await _ask(f"{scheme}://crm.local", allow_private_http=True)
    assert code == 1
    assert f"Could not reach the proxy http://bob:***@127.0.0.1:{dead} (from {variable})" in err
    assert "connection refused" in err and "hunter22" not in err


# --- certificates ---------------------------------------------------------------------------


async def test_a_self_signed_certificate_is_refused_naming_the_host_then_trusted_by_ssl_cert_file(
    tmp_path: Path, tls_server: Callable[[tuple[str, str]], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The §1 https path with a certificate the system does not know, and the way out."""
    certfile, keyfile = self_signed(tmp_path, "127.0.0.1")
    address = f"https://127.0.0.1:{tls_server((certfile, keyfile))}"
    code, _, err = await _ask(address)
    assert code == 1
    assert "The TLS certificate of 127.0.0.1 is not trusted" in err
    assert "set SSL_CERT_FILE to your company's CA bundle" in err

    monkeypatch.setenv("SSL_CERT_FILE", certfile)
    assert await _ask(address) == (0, "through\n", "")


async def test_a_certificate_for_another_name_and_an_expired_one_say_so(
    company_ca: CompanyCA,
    tls_server: Callable[[tuple[str, str]], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Trusted CA, wrong name / expired: not "untrusted", but what is actually wrong."""
    monkeypatch.setenv("SSL_CERT_FILE", company_ca.pem)
    wrong = tls_server(company_ca.issue("other.test"))
    code, _, err = await _ask(f"https://127.0.0.1:{wrong}")
    assert code == 1 and "The TLS certificate of 127.0.0.1 is for another name" in err
    old = tls_server(company_ca.issue("127.0.0.1", expired=True))
    code, _, err = await _ask(f"https://127.0.0.1:{old}")
    assert code == 1 and "The TLS certificate of 127.0.0.1 has expired" in err


async def test_ssl_cert_file_that_is_missing_is_named_in_the_failure(
    tmp_path: Path, tls_server: Callable[[tuple[str, str]], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo in SSL_CERT_FILE is the likeliest cause of "not trusted": it is pointed out."""
    port = tls_server(self_signed(tmp_path, "127.0.0.1"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    code, _, err = await _ask(f"https://127.0.0.1:{port}")
    assert code == 1
    assert f"SSL_CERT_FILE ({tmp_path / 'missing.pem'}) could not be used" in err
    assert trust_store().extra[0].problem == "there is no such file"


async def test_ssl_cert_file_adds_to_the_system_store(
    tmp_path: Path,
    company_ca: CompanyCA,
    tls_server: Callable[[tuple[str, str]], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SSL_CERT_FILE widens trust; the system store still counts (here a second CA stands in
    for it, since the suite cannot add one to the real store)."""
    system_ca = CompanyCA(tmp_path)  # "the system store" of this test
    monkeypatch.setattr(trust, "_system_bundle", lambda: system_ca.pem)
    monkeypatch.setattr(trust, "_system_folder", lambda: None)
    monkeypatch.setattr(trust, "_contexts", {})
    monkeypatch.setenv("SSL_CERT_FILE", company_ca.pem)
    by_system = tls_server(system_ca.issue("127.0.0.1"))
    by_company = tls_server(company_ca.issue("127.0.0.1"))
    async with make_http_client() as http:
        for port in (by_system, by_company):
            server = await fetch_manifest(http, f"https://127.0.0.1:{port}/.well-known/talkie.json")
            assert server.origin == f"https://127.0.0.1:{port}"


# --- the client itself ----------------------------------------------------------------------


async def test_the_shared_client_follows_no_redirects_and_names_itself() -> None:
    """One factory for every client: no redirects, talkie's User-Agent, a timeout."""
    assert protocol_client.make_http_client is make_http_client

    def handle(request: httpx.Request) -> httpx.Response:
        assert request.headers["user-agent"].startswith("talkie-tui/")
        return httpx.Response(302, headers={"location": "https://elsewhere.example/"})

    async with make_http_client(transport=httpx.MockTransport(handle)) as http:
        response = await http.get("https://crm.example.test/")
        assert response.status_code == 302 and http.timeout.connect == 10.0


async def test_a_broken_proxy_setting_fails_the_request_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ALL_PROXY=socks5://… without socksio installed: said plainly, not an ImportError."""
    monkeypatch.setitem(sys.modules, "socksio", None)  # as where httpx[socks] is not installed
    monkeypatch.setenv("ALL_PROXY", f"socks5://127.0.0.1:{_free_port()}")
    code, _, err = await _ask("https://crm.example.test")
    assert code == 1 and "ALL_PROXY names a SOCKS proxy" in err and "socksio" in err


def test_transport_errors_keep_their_type() -> None:
    """describe_transport_error still returns a TransportError (the UI picks hints by type)."""
    from talkie_tui.protocol.talkie.manifest import describe_transport_error

    request = httpx.Request("GET", "https://crm.example.test/")
    error = describe_transport_error(httpx.ConnectError("boom", request=request), "X")
    assert isinstance(error, TransportError) and error.retryable
