"""The real authorization server of the sign-in tests, and a headless browser for its forms.

`start_oidc_provider()` runs `tests/oauth_server/server.mjs` (npm `oidc-provider`, pinned in
`tests/oauth_server/package-lock.json`) under Node on 127.0.0.1 and returns an `OidcProvider`;
`OidcProvider.stop()` ends it. `browse_to_callback()` plays the user in a browser: it follows
the AS's redirects, signs in on the dev login form, consents (or aborts), and returns the
loopback callback URL the AS redirected to, without requesting it.

The plain-httpx helpers below (`Pkce`, `authorization_url`, `sign_in`, `exchange_code`,
`refresh`, `revoke`, `introspect`) are a hand-rolled client, independent of talkie_tui.auth.
"""

from __future__ import annotations

import html
import os
import queue
import re
import secrets
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge

REPO_ROOT = Path(__file__).resolve().parent.parent
SERVER_DIR = REPO_ROOT / "tests" / "oauth_server"
SERVER_SCRIPT = SERVER_DIR / "server.mjs"
SHIPPED_CIMD = REPO_ROOT / "oauth" / "client.json"

DEFAULT_CLIENT_ID = "https://talkie.firemni-crm.cz/oauth/terminal.json"
DEFAULT_AUDIENCE = "https://talkie.test/api"
# What talkie requests (the manifest's `auth.oauth.scopes`); the shipped CIMD allows no more.
DEFAULT_SCOPE = "talkie offline_access"
# Never requested: the driver stops at the redirect. Any loopback port must match (RFC 8252).
CALLBACK = "http://127.0.0.1:53682/callback"
STARTUP_TIMEOUT = 20.0
HTTP_TIMEOUT = 10.0


@dataclass
class OidcProvider:
    """A running oidc-provider: its issuer, the clients it knows, and the Node process."""

    issuer: str
    client_id: str
    resource_client_id: str
    resource_client_secret: str = field(repr=False)
    audience: str
    access_ttl: float
    process: subprocess.Popen[str] = field(repr=False)
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)
    _stderr: list[str] = field(default_factory=list, repr=False)

    def endpoint(self, name: str) -> str:
        """The URL of a metadata endpoint, e.g. `endpoint("token")` for `token_endpoint`."""
        return str(self.metadata[f"{name}_endpoint"])

    def stderr(self) -> str:
        """What Node wrote to stderr so far (warnings, crashes)."""
        return "".join(self._stderr)

    def stop(self) -> None:
        """End the Node process (SIGTERM, then SIGKILL after 5 s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def require_node() -> str:
    """The path of `node`; skips the test when Node or the npm packages are missing."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js (`node`) is not installed; run make test, which installs it")
    if not (SERVER_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.skip(
            "tests/oauth_server/node_modules is missing (npm ci); run make test, which installs it"
        )
    return node


def _drain(stream: Any, sink: queue.Queue[str] | list[str]) -> None:
    # Reading the pipes to the end keeps Node from blocking on a full pipe buffer.
    for line in stream:
        if isinstance(sink, list):
            sink.append(line)
        else:
            sink.put(line)


def start_oidc_provider(
    *,
    access_ttl: int = 60,
    cimd_file: Path | None = None,
    client_id: str = DEFAULT_CLIENT_ID,
    audience: str = DEFAULT_AUDIENCE,
    port: int = 0,
    resource_client_secret: str | None = None,
) -> OidcProvider:
    """Start oidc-provider on 127.0.0.1 (port 0: a free one) and wait until it serves metadata."""
    node = require_node()
    resource_client_id = "talkie-reference-server"
    resource_client_secret = resource_client_secret or secrets.token_urlsafe(24)
    env = {
        **os.environ,
        "PORT": str(port),  # with 0, server.mjs binds first and names the port when ready
        "ACCESS_TTL": str(int(access_ttl)),
        "CLIENT_ID": client_id,
        "RESOURCE_CLIENT_ID": resource_client_id,
        "RESOURCE_CLIENT_SECRET": resource_client_secret,
        "AUDIENCE": audience,
    }
    env.pop("CIMD_FILE", None)  # only the argument decides the mode
    if cimd_file is not None:
        env["CIMD_FILE"] = str(Path(cimd_file).resolve())
    process = subprocess.Popen(
        [node, str(SERVER_SCRIPT)],
        cwd=SERVER_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    errors: list[str] = []
    for stream, sink in ((process.stdout, lines), (process.stderr, errors)):
        threading.Thread(target=_drain, args=(stream, sink), daemon=True).start()

    def fail(reason: str) -> RuntimeError:
        process.kill()
        process.wait(5)
        time.sleep(0.1)  # let the reader thread collect Node's last words
        return RuntimeError(f"oidc-provider {reason}; node stderr:\n{''.join(errors)}")

    deadline = time.monotonic() + STARTUP_TIMEOUT
    issuer = None
    while issuer is None:
        if time.monotonic() > deadline:
            raise fail(f"printed no ready line within {STARTUP_TIMEOUT:.0f} s")
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            if process.poll() is not None:
                raise fail(f"exited with code {process.returncode} before it was ready") from None
            continue
        if line.startswith("ready "):
            issuer = line.split(" ", 1)[1].strip()
    metadata = _wait_for_metadata(issuer, deadline)
    if metadata is None:
        raise fail(f"did not serve {issuer}/.well-known/openid-configuration in time")
    return OidcProvider(
        issuer=issuer,
        client_id=client_id,
        resource_client_id=resource_client_id,
        resource_client_secret=resource_client_secret,
        audience=audience,
        access_ttl=float(access_ttl),
        process=process,
        metadata=metadata,
        _stderr=errors,
    )


def _wait_for_metadata(issuer: str, deadline: float) -> dict[str, Any] | None:
    with httpx.Client(timeout=2.0, trust_env=False) as client:
        while time.monotonic() < deadline:
            try:
                response = client.get(f"{issuer}/.well-known/openid-configuration")
            except httpx.TransportError:
                response = None
            if response is not None and response.status_code == 200:
                body: dict[str, Any] = response.json()
                return body
            time.sleep(0.05)
    return None


# --- the headless browser --------------------------------------------------------------------


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def page_text(markup: str) -> str:
    """The visible text of an HTML page, for assertion messages."""
    markup = re.sub(r"(?is)<(style|script)\b.*?</\1>", " ", markup)
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", markup).split()))


def browse_to_callback(
    authorization_url: str,
    *,
    user: str = "alice",
    deny: bool = False,
    redirect_prefix: str = "http://127.0.0.1:",
) -> str:
    """Sign in as `user` and consent (or abort); the callback URL the AS redirects to."""
    as_origin = _origin(authorization_url)
    url = authorization_url
    # A fresh cookie jar per call: a new browser, so the AS always shows its login form.
    with httpx.Client(follow_redirects=False, timeout=HTTP_TIMEOUT, trust_env=False) as browser:
        for _ in range(20):
            response = browser.get(url)
            if not response.is_redirect and response.status_code == 200:
                response = _submit_page(browser, url, response.text, user=user, deny=deny)
            if not response.is_redirect:
                raise AssertionError(
                    f"the AS answered {response.status_code} at {url} instead of redirecting:"
                    f"\n{page_text(response.text)}"
                )
            url = urljoin(url, response.headers["location"])
            if _origin(url) != as_origin:
                assert url.startswith(redirect_prefix), f"redirected off the AS to {url}"
                return url
    raise AssertionError(f"no callback after 20 redirects; last URL {url}")


def _submit_page(
    browser: httpx.Client, url: str, markup: str, *, user: str, deny: bool
) -> httpx.Response:
    """Fill in the dev login or consent form (or follow its abort link)."""
    if deny:
        abort = re.search(r'href="([^"]*/abort)"', markup)
        if abort is None:
            raise AssertionError(f"no abort link on {url}:\n{page_text(markup)}")
        return browser.get(urljoin(url, html.unescape(abort[1])))
    action = re.search(r'<form[^>]*action="([^"]+)"', markup)
    prompt = re.search(r'name="prompt" value="([^"]+)"', markup)
    if action is None or prompt is None:
        raise AssertionError(f"the AS showed a page without a form at {url}:\n{page_text(markup)}")
    data = {"prompt": prompt[1]}
    if prompt[1] == "login":
        data |= {"login": user, "password": "any password"}
    return browser.post(urljoin(url, html.unescape(action[1])), data=data)


# --- a hand-rolled client --------------------------------------------------------------------


@dataclass(frozen=True)
class Pkce:
    """A PKCE verifier and its S256 challenge."""

    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        """A fresh pair (86-character verifier, RFC 7636 charset)."""
        verifier = secrets.token_urlsafe(64)
        return cls(verifier, create_s256_code_challenge(verifier))


def authorization_url(
    provider: OidcProvider,
    *,
    state: str,
    code_challenge: str,
    redirect_uri: str = CALLBACK,
    scope: str = DEFAULT_SCOPE,
    prompt: str | None = "consent",
) -> str:
    """The authorization request URL (code flow, PKCE S256) for the talkie client."""
    params = {
        "response_type": "code",
        "client_id": provider.client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "state": state,
        "code_challenge": code_challenge,
        "code_challenge_method": "S256",
    }
    if prompt is not None:
        params["prompt"] = prompt
    return f"{provider.endpoint('authorization')}?{urlencode(params)}"


def callback_params(callback_url: str) -> dict[str, str]:
    """The query parameters of a callback URL, one value each."""
    return {key: values[0] for key, values in parse_qs(urlsplit(callback_url).query).items()}


def _post(url: str, data: dict[str, str], auth: httpx.Auth | None = None) -> httpx.Response:
    with httpx.Client(auth=auth, timeout=HTTP_TIMEOUT, trust_env=False) as client:
        return client.post(url, data=data)


def exchange_code(
    provider: OidcProvider, code: str, verifier: str, redirect_uri: str = CALLBACK
) -> httpx.Response:
    """POST the authorization code (and PKCE verifier) to the token endpoint."""
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": redirect_uri,
        "client_id": provider.client_id,
    }
    return _post(provider.endpoint("token"), data)


def sign_in(
    provider: OidcProvider, *, user: str = "alice", scope: str = DEFAULT_SCOPE
) -> dict[str, Any]:
    """The whole code flow with `prompt=consent`; the token response (checked to be 200)."""
    pkce, state = Pkce.new(), secrets.token_urlsafe(16)
    url = authorization_url(provider, state=state, code_challenge=pkce.challenge, scope=scope)
    params = callback_params(browse_to_callback(url, user=user))
    assert params.get("state") == state, params
    assert "code" in params, params
    response = exchange_code(provider, params["code"], pkce.verifier)
    assert response.status_code == 200, response.text
    tokens: dict[str, Any] = response.json()
    return tokens


def refresh(provider: OidcProvider, refresh_token: str) -> httpx.Response:
    """POST a refresh_token grant as the public client."""
    data = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": provider.client_id,
    }
    return _post(provider.endpoint("token"), data)


def revoke(provider: OidcProvider, token: str, token_type_hint: str) -> httpx.Response:
    """POST a token to the revocation endpoint (RFC 7009) as the public client."""
    data = {"token": token, "token_type_hint": token_type_hint, "client_id": provider.client_id}
    return _post(provider.endpoint("revocation"), data)


def introspect(provider: OidcProvider, token: str, hint: str = "access_token") -> dict[str, Any]:
    """RFC 7662 introspection with the resource server's credentials."""
    auth = httpx.BasicAuth(provider.resource_client_id, provider.resource_client_secret)
    data = {"token": token, "token_type_hint": hint}
    response = _post(provider.endpoint("introspection"), data, auth=auth)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def oauth_config(provider: OidcProvider, **overrides: Any) -> dict[str, Any]:
    """ServerConfig overrides for a reference server that checks `provider`'s tokens."""
    return {
        "oauth_issuer": provider.issuer,
        "oauth_client_id": provider.resource_client_id,
        "oauth_client_secret": provider.resource_client_secret,
        "oauth_audience": provider.audience,
        **overrides,
    }
