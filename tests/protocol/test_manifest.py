"""§1 Discovery: the manifest, its origin, redirects, size, cache and the https rule."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from talkie_tui.core.errors import DiscoveryError, TransportError
from talkie_tui.core.urls import origin_of
from talkie_tui.protocol.talkie.manifest import (
    MANIFEST_PATH,
    DiscoveredServer,
    ForeignEndpointError,
    ManifestCache,
    check_secure,
    fetch_manifest,
    manifest_url_for,
    resolve_endpoint,
    validate_manifest,
)
from tests.protocol.conftest import Connect, Serve
from tests.stub_server import (
    ANOTHER_LOOPBACK,
    Streamer,
    StubServer,
    envelope,
    manifest_document,
    small_buffer_client,
    talkie_app,
)

ORIGIN = "https://crm.example.com"
BIG = 50 * 1024 * 1024


async def _validate(**overrides: Any) -> DiscoveredServer:
    """Discover a manifest of ORIGIN with these fields (a pure unit: no network)."""
    document = manifest_document(ORIGIN, **overrides)
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=document))
    async with httpx.AsyncClient(transport=transport) as http:
        return await fetch_manifest(http, ORIGIN + MANIFEST_PATH)


def _route(path: str, respond: Callable[[Request], Response]) -> Route:
    """A route answering every request to `path` with `respond(request)`."""

    async def endpoint(request: Request) -> Response:
        return respond(request)

    return Route(path, endpoint)


def _own_manifest(request: Request) -> Response:
    return JSONResponse(manifest_document(f"http://{request.url.netloc}"))


async def _fetch(url: str, **kwargs: Any) -> DiscoveredServer:
    async with small_buffer_client(timeout=kwargs.pop("timeout", 5.0)) as http:
        return await fetch_manifest(http, url, **kwargs)


# --- what the user types ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "url"),
    [
        ("crm.example.com", "https://crm.example.com/.well-known/talkie.json"),
        ("crm.example.com:8443", "https://crm.example.com:8443/.well-known/talkie.json"),
        ("https://crm.example.com/", "https://crm.example.com/.well-known/talkie.json"),
        ("https://crm.example.com/t/talkie.json#x", "https://crm.example.com/t/talkie.json"),
        ("localhost:8000", "http://localhost:8000/.well-known/talkie.json"),
        ("127.0.0.1:8000", "http://127.0.0.1:8000/.well-known/talkie.json"),
        ("[::1]:8000", "http://[::1]:8000/.well-known/talkie.json"),
    ],
)
def test_address_forms_lead_to_the_manifest_url(typed: str, url: str) -> None:
    """§1: host[:port] means https://host/.well-known/talkie.json; a full URL is used as is."""
    assert str(manifest_url_for(typed)) == url


@pytest.mark.parametrize(
    "typed",
    ["", "   ", "http://crm.example.com", "ftp://crm.example.com", "https://u:p@crm.example.com"],
)
def test_unusable_addresses_are_refused(typed: str) -> None:
    """No address, plain http outside loopback, other schemes and credentials are refused."""
    with pytest.raises(DiscoveryError):
        manifest_url_for(typed)


@pytest.mark.parametrize(
    "url",
    [
        "https://crm.example.com",
        "http://localhost:1",
        "http://app.localhost",
        "http://127.0.0.5",
        "http://[::1]:9",
    ],
)
def test_https_or_loopback_http_is_accepted(url: str) -> None:
    """§1: HTTPS is required, except http to localhost and loopback addresses."""
    check_secure(httpx.URL(url))


@pytest.mark.parametrize(
    "url", ["http://crm.example.com", "http://localhost.evil.com", "http://127.0.0.1.nip.io"]
)
def test_plain_http_to_other_hosts_is_refused(url: str) -> None:
    """§1: plain http to a non-loopback host is refused, even when it looks local."""
    with pytest.raises(DiscoveryError, match="plain http"):
        check_secure(httpx.URL(url))


@pytest.mark.parametrize("url", ["http://10.1.2.3", "http://192.168.1.5:8000", "http://nas.local"])
def test_private_lan_http_needs_the_development_switch(url: str) -> None:
    """§1: private LAN addresses over http only in development (an explicit switch)."""
    with pytest.raises(DiscoveryError, match="--allow-private-http"):
        check_secure(httpx.URL(url))
    check_secure(httpx.URL(url), allow_private_http=True)


async def test_plain_http_is_refused_before_any_connection() -> None:
    """§1: the refusal happens before a single byte goes to the non-loopback host."""
    attempts: list[httpx.Request] = []

    def transport(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        return httpx.Response(200, json=manifest_document("http://crm.example.com"))

    async with httpx.AsyncClient(transport=httpx.MockTransport(transport)) as http:
        with pytest.raises(DiscoveryError):
            await fetch_manifest(http, "http://crm.example.com" + MANIFEST_PATH)
    assert attempts == []


# --- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["talkie/1", "talkie/1.0", "talkie/1.7"])
def test_talkie_1_minor_versions_are_accepted(spec: str) -> None:
    """§1: spec talkie/1 (any minor revision of major 1)."""
    manifest, _ = validate_manifest(manifest_document(ORIGIN, spec=spec), ORIGIN)
    assert manifest.spec == spec


@pytest.mark.parametrize("spec", ["talkie/2", "talkie/10", "talkie/1x", "talkie/0.9", 1, None])
def test_other_major_versions_are_refused(spec: object) -> None:
    """§1 MUST: a client refuses other major versions."""
    with pytest.raises(DiscoveryError, match="speaks"):
        validate_manifest(manifest_document(ORIGIN, spec=spec), ORIGIN)


@pytest.mark.parametrize("data", [[], "talkie/1", {"name": "no spec"}])
def test_a_document_without_spec_is_not_a_talkie_manifest(data: object) -> None:
    """Anything that is not an object with `spec` is not a Talkie server."""
    with pytest.raises(DiscoveryError, match="not a Talkie server"):
        validate_manifest(data, ORIGIN)


def test_unknown_fields_are_ignored() -> None:
    """§1 MUST: unknown fields are ignored, known ones still read."""
    document = manifest_document(ORIGIN, future={"x": 1}, limits={"maxMessageChars": 99, "y": 2})
    manifest, warnings = validate_manifest(document, ORIGIN)
    assert manifest.limits.max_message_chars == 99 and warnings == []


def test_invalid_known_fields_are_reported_by_name() -> None:
    """A manifest missing a required field says which one."""
    document = manifest_document(ORIGIN)
    del document["serverId"]
    with pytest.raises(DiscoveryError, match="serverId"):
        validate_manifest(document, ORIGIN)


@pytest.mark.parametrize(
    ("issuer", "accepted"),
    [
        ("https://crm.example.com", True),
        ("https://crm.example.com:443/", True),
        ("https://CRM.example.com", True),
        ("https://other.example.com", False),
        ("http://crm.example.com", False),
        ("https://crm.example.com:8443", False),
    ],
)
def test_manifest_must_come_from_its_issuer_origin(issuer: str, accepted: bool) -> None:
    """§1 MUST: the manifest is served from the issuer origin (canonical form compared)."""
    document = manifest_document(issuer)
    if accepted:
        assert validate_manifest(document, ORIGIN)[0].issuer == ORIGIN
    else:
        with pytest.raises(DiscoveryError, match="another origin"):
            validate_manifest(document, ORIGIN)


@pytest.mark.parametrize("issuer", ["https://crm.example.com/tenant", "crm.example.com", "x://"])
def test_issuer_must_be_an_origin(issuer: str) -> None:
    """§1: `issuer` is an origin `https://host[:port]`, nothing more."""
    with pytest.raises(DiscoveryError, match="issuer"):
        validate_manifest(manifest_document(issuer), ORIGIN)


async def test_bad_brand_accent_and_missing_sign_in_are_warnings() -> None:
    """§1: accent is #rrggbb (else ignored); no sign-in method is worth a warning."""
    server = await _validate(brand={"accent": "red", "logo": 5}, auth={})
    assert server.manifest.brand.accent is None and server.manifest.brand.logo is None
    assert len(server.warnings) == 2


# --- endpoints ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "params", "url"),
    [
        ("/api/talkie/status", {}, ORIGIN + "/api/talkie/status"),
        ("api/talkie/status", {}, ORIGIN + "/api/talkie/status"),
        ("/t/{threadId}", {"threadId": "a/b c?#%"}, ORIGIN + "/t/a%2Fb%20c%3F%23%25"),
        ("/t/{threadId}", {"threadId": ".."}, ORIGIN + "/t/%2E%2E"),
        ("/t/{threadId}/x", {"threadId": "č"}, ORIGIN + "/t/%C4%8D/x"),
        ("//evil.example/run", {}, "https://evil.example/run"),
    ],
)
def test_endpoints_resolve_against_the_issuer_origin(
    template: str, params: dict[str, str], url: str
) -> None:
    """§1: templates resolve against the issuer origin; {name} is one URL-encoded segment."""
    assert resolve_endpoint(ORIGIN, template, params) == url


def test_a_placeholder_without_a_value_is_an_error() -> None:
    """A template that needs an id cannot be used without it."""
    with pytest.raises(DiscoveryError, match="threadId"):
        resolve_endpoint(ORIGIN, "/t/{threadId}")


async def test_endpoints_on_another_origin_need_the_users_acceptance() -> None:
    """§1: a foreign endpoint is listed, refused until the user accepts its origin."""
    endpoints = {
        "status": "https://elsewhere.example/status",
        "threads": "//evil.example/threads",
        "run": "/api/run",
        "thread": "https://crm.example.com/t/{threadId}",
    }
    server = await _validate(endpoints=endpoints)

    assert server.foreign_endpoints == {
        "status": "https://elsewhere.example",
        "threads": "https://evil.example",
    }
    with pytest.raises(ForeignEndpointError) as refused:
        server.endpoint("status")
    assert refused.value.origin == "https://elsewhere.example"
    assert server.endpoint("thread", threadId="x") == ORIGIN + "/t/x"

    server.accepted_origins.add("https://elsewhere.example")
    assert server.endpoint("status") == "https://elsewhere.example/status"
    with pytest.raises(ForeignEndpointError):
        server.endpoint("threads")


async def test_endpoints_the_server_does_not_offer() -> None:
    """§1: unsupported endpoints are omitted; asking for one is a clear error."""
    server = await _validate(endpoints={"run": "/run", "bad": 5})
    assert server.has_endpoint("run") and not server.has_endpoint("voiceSessions")
    assert not server.has_endpoint("bad")
    with pytest.raises(DiscoveryError, match="voiceSessions"):
        server.endpoint("voiceSessions")


async def test_encoded_segments_reach_the_server_unchanged(serve: Serve, connect: Connect) -> None:
    """§1: `{name}` is a URL-encoded path segment: `..` and `/` cannot change the path."""

    async def thread(request: Request) -> Response:
        return JSONResponse({"thread": {"id": request.path_params["tid"]}, "messages": []})

    stub = serve(talkie_app([Route("/api/talkie/threads/{tid:path}", thread)]))
    client = await connect(stub.origin)

    await client.thread("..")
    await client.thread("a/b")

    assert [r.raw_path for r in stub.requests[1:]] == [
        b"/api/talkie/threads/%2E%2E",
        b"/api/talkie/threads/a%2Fb",
    ]


async def test_full_manifest_url_with_relative_endpoints_resolves_against_origin(
    serve: Serve, connect: Connect
) -> None:
    """§1: endpoints resolve against the issuer origin, not against the manifest URL."""

    def manifest(request: Request) -> Response:
        origin = f"http://{request.url.netloc}"
        return JSONResponse(manifest_document(origin, endpoints={"status": "api/status"}))

    status = _route("/api/status", lambda r: JSONResponse({"user": {"name": "Jana"}}))
    stub = serve(talkie_app([_route("/tenants/a/talkie.json", manifest), status]))
    client = await connect(stub.url("/tenants/a/talkie.json"))

    assert (await client.status()).user.name == "Jana"
    assert stub.paths() == ["/tenants/a/talkie.json", "/api/status"]


# --- redirects ------------------------------------------------------------------------------


async def test_same_origin_redirects_are_followed(serve: Serve, connect: Connect) -> None:
    """§1: a redirect within the issuer origin is fine."""
    redirect = _route(MANIFEST_PATH, lambda r: RedirectResponse("/moved/talkie.json", 302))
    stub = serve(talkie_app([redirect, _route("/moved/talkie.json", _own_manifest)]))

    client = await connect(stub.origin)

    assert client.server.manifest_url == stub.url("/moved/talkie.json")
    assert client.server.origin == stub.origin


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(lambda stub, other: other.url(MANIFEST_PATH), id="another loopback host"),
        pytest.param(lambda stub, other: f"http://127.0.0.1:{other.port}/", id="another port"),
        pytest.param(lambda stub, other: f"https://127.0.0.1:{stub.port}/", id="https"),
    ],
)
async def test_redirects_to_another_origin_are_not_followed(
    serve: Serve, target: Callable[[StubServer, StubServer], str]
) -> None:
    """§1 MUST NOT: the manifest fetch never follows a redirect to another origin."""
    other = serve(talkie_app(), host=ANOTHER_LOOPBACK)
    stub = serve(talkie_app([_route(MANIFEST_PATH, lambda r: RedirectResponse(location))]))
    location = target(stub, other)

    with pytest.raises(DiscoveryError, match="another site"):
        await _fetch(stub.url(MANIFEST_PATH))

    assert stub.paths() == [MANIFEST_PATH]
    assert other.requests == []


async def test_endless_redirects_stop(serve: Serve) -> None:
    """A same-origin redirect loop ends with an error, not a hang."""
    stub = serve(talkie_app([_route(MANIFEST_PATH, lambda r: RedirectResponse("#"))]))
    with pytest.raises(DiscoveryError, match="too many"):
        await _fetch(stub.url(MANIFEST_PATH))


# --- size -----------------------------------------------------------------------------------


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_a_50_mb_manifest_is_not_downloaded(serve: Serve, declared: bool) -> None:
    """§1: a manifest is at most 64 kB; a huge one is refused without reading it whole."""
    streamer = Streamer(repeat=b" " * 65536, limit=BIG)

    async def huge(request: Request) -> Response:
        headers = {"content-length": str(BIG)} if declared else {}
        return StreamingResponse(streamer.body(), media_type="application/json", headers=headers)

    stub = serve(talkie_app([Route(MANIFEST_PATH, huge)]), small_buffers=True)

    with pytest.raises(DiscoveryError, match="larger than 64 kB"):
        await _fetch(stub.url(MANIFEST_PATH))

    assert streamer.wait_abandoned(), "the server should see the client hang up"
    assert streamer.sent < 1024 * 1024


async def test_a_manifest_just_under_the_limit_is_read(serve: Serve) -> None:
    """§1: up to 64 kB is fine (padding with whitespace keeps it valid JSON)."""

    def padded(request: Request) -> Response:
        body = JSONResponse(manifest_document(f"http://{request.url.netloc}")).body
        return Response(body + b" " * (64 * 1024 - len(body)), media_type="application/json")

    stub = serve(talkie_app([_route(MANIFEST_PATH, padded)]))
    assert (await _fetch(stub.url(MANIFEST_PATH))).server_id == "stub.test"


# --- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "match", "retryable"),
    [
        (PlainTextResponse("nope", 404), "not a Talkie server", False),
        (PlainTextResponse("<html>{not json", 200), "not JSON", False),
        (
            JSONResponse(envelope("internal", "Database down", retryable=True), 500),
            "Database",
            True,
        ),
        (PlainTextResponse("<html><body>Bad Gateway</body></html>", 502), "HTTP 502", True),
        (PlainTextResponse("", 403), "HTTP 403", False),
    ],
)
async def test_manifest_failures_explain_themselves(
    serve: Serve, response: Response, match: str, retryable: bool
) -> None:
    """Failures name the cause, use the §3 message when given, and never dump HTML."""
    stub = serve(talkie_app([_route(MANIFEST_PATH, lambda r: response)]))

    with pytest.raises(DiscoveryError, match=match) as failed:
        await _fetch(stub.url(MANIFEST_PATH))

    assert failed.value.retryable is retryable
    assert "<html" not in failed.value.message


async def test_connection_refused_is_a_retryable_transport_error(serve: Serve) -> None:
    """A server that is not running gives a TransportError that says so."""
    stub = serve(talkie_app())
    stub.stop()
    with pytest.raises(TransportError, match="Could not connect") as failed:
        await _fetch(stub.url(MANIFEST_PATH))
    assert failed.value.retryable


async def test_a_silent_server_times_out(serve: Serve) -> None:
    """Every network wait has a timeout."""

    async def silent(request: Request) -> Response:
        await asyncio.sleep(2)
        return PlainTextResponse("late")

    stub = serve(talkie_app([Route(MANIFEST_PATH, silent)]))
    with pytest.raises(TransportError, match="did not answer in time"):
        await _fetch(stub.url(MANIFEST_PATH), timeout=0.2)


# --- cache ----------------------------------------------------------------------------------


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _manifest_fetches(stub: StubServer) -> int:
    return stub.paths().count(MANIFEST_PATH)


@pytest.mark.parametrize(
    ("cache_control", "max_age"),
    [
        (None, 3600.0),
        ("public, max-age=60", 60.0),
        ('max-age="120"', 120.0),
        ("max-age=soon", 3600.0),
        ("no-store", 0.0),
        ("no-cache, max-age=60", 0.0),
    ],
)
async def test_manifest_cache_respects_cache_control(
    serve: Serve, cache_control: str | None, max_age: float
) -> None:
    """§1 SHOULD: cache the manifest as Cache-Control says (default one hour)."""
    stub = serve(talkie_app(cache_control=cache_control))
    clock = FakeClock()
    cache = ManifestCache(clock)
    url = stub.url(MANIFEST_PATH)

    async with httpx.AsyncClient() as http:
        first = await cache.discover(http, url)
        clock.now += max_age - 1
        await cache.discover(http, url)
        fetched_within_max_age = _manifest_fetches(stub)
        clock.now += 2
        await cache.discover(http, url)

    assert first.max_age == max_age
    assert fetched_within_max_age == (1 if max_age > 1 else 2)
    assert _manifest_fetches(stub) == fetched_within_max_age + 1


@pytest.mark.parametrize("status", [401, 404])
async def test_manifest_is_refreshed_on_401_and_404(
    serve: Serve, connect: Connect, status: int
) -> None:
    """§1 SHOULD: refresh the manifest on 401/404; moved endpoints are then used."""
    moved = {"value": False}

    def manifest(origin: str) -> dict[str, Any]:
        path = "/v2/status" if moved["value"] else "/v1/status"
        return manifest_document(origin, endpoints={"status": path})

    async def old(request: Request) -> Response:
        moved["value"] = True
        return JSONResponse(envelope("gone", "moved"), status_code=status)

    async def new(request: Request) -> Response:
        return JSONResponse({"user": {"name": "Jana"}})

    stub = serve(
        talkie_app([Route("/v1/status", old), Route("/v2/status", new)], manifest=manifest)
    )
    client = await connect(stub.origin)

    assert (await client.status()).user.name == "Jana"
    assert stub.paths() == [MANIFEST_PATH, "/v1/status", MANIFEST_PATH, "/v2/status"]
    assert client.server.manifest.endpoints["status"] == "/v2/status"


async def test_a_cached_manifest_is_reused_by_the_next_connection(
    serve: Serve, connect: Connect
) -> None:
    """§1 SHOULD: a fresh cached manifest is not fetched again."""
    stub = serve(talkie_app())
    cache = ManifestCache()

    first = await connect(stub.origin, cache=cache)
    second = await connect(stub.origin, cache=cache)

    assert first.server is second.server
    assert _manifest_fetches(stub) == 1


def test_origin_of_drops_default_ports() -> None:
    """Origins are compared in canonical form."""
    assert origin_of("https://h:443/x") == "https://h"
    assert origin_of("http://h:80/x") == "http://h"
    assert origin_of("http://[::1]:8000/x") == "http://[::1]:8000"


# --- https ----------------------------------------------------------------------------------


async def test_https_discovery_works_with_a_trusted_certificate(
    serve: Serve, certificate: tuple[str, str]
) -> None:
    """§1: the https path end to end (issuer https://127.0.0.1:port)."""
    stub = serve(talkie_app(), tls=certificate)
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=certificate[0])) as http:
        server = await fetch_manifest(http, stub.url(MANIFEST_PATH))
    assert server.origin == stub.origin and stub.origin.startswith("https://")


async def test_an_untrusted_certificate_is_refused_and_retrying_will_not_help(
    serve: Serve, certificate: tuple[str, str]
) -> None:
    """A TLS failure names the certificate problem; retrying does not help."""
    stub = serve(talkie_app(), tls=certificate)
    with pytest.raises(TransportError, match=r"certificate of .* is not trusted") as failed:
        await _fetch(stub.url(MANIFEST_PATH))
    assert not failed.value.retryable


# --- odd input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "match"), [("http://[::1", "not a server address"), ("http://:80", "no host")]
)
def test_addresses_that_are_not_urls(typed: str, match: str) -> None:
    """An address that cannot be parsed is refused with a reason."""
    with pytest.raises(DiscoveryError, match=match):
        manifest_url_for(typed)


async def test_odd_endpoint_and_capability_values_are_ignored() -> None:
    """Endpoints that are not an object of strings, and a voice capability that is not an
    object, are treated as absent."""
    server = await _validate(endpoints="not an object", capabilities={"voice": True})
    assert server.manifest.endpoints == {} and server.manifest.voice == {}
    server = await _validate(capabilities={"voice": {"transports": ["webrtc"]}})
    assert server.manifest.voice == {"transports": ["webrtc"]}
