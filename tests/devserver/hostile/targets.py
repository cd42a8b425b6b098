"""The three reference servers as the hostile suite attacks them: each started as the other
devserver tests start it (in a thread, on 127.0.0.1, port 0, a fresh database), with a few
real ids to aim at, the credential each path needs, the shape of its errors, and a normal
request that must still work after any hostile one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from talkie_tui.devserver.cuckoo.app import create_app as create_hub
from talkie_tui.devserver.cuckoo.config import HubConfig
from talkie_tui.devserver.cuckoo.runner import serve_in_thread as serve_hub
from talkie_tui.devserver.minara.app import create_app as create_gateway
from talkie_tui.devserver.minara.config import GatewayConfig
from talkie_tui.devserver.minara.runner import serve_in_thread as serve_gateway
from talkie_tui.devserver.talkie.app import create_app as create_talkie
from talkie_tui.devserver.talkie.config import ServerConfig
from talkie_tui.devserver.talkie.runner import serve_in_thread as serve_talkie
from tests.devserver.cuckoo.wire import Agent, dev, make_agent
from tests.devserver.hostile.kit import Endpoint, answer_checked, endpoints, error_of
from tests.helpers import AUTH, TEST_TOKEN


@dataclass
class Target:
    """One running server under attack."""

    name: str
    url: str
    endpoints: list[Endpoint]
    ids: list[str]
    headers: Callable[[str], dict[str, str]]
    shape: Callable[[httpx.Response], None]
    healthy: Callable[[httpx.Client], None]
    real: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def real_id(self, param: str) -> str:
        """A real value for a path parameter (the first id when none is known for it)."""
        return self.real.get(param, self.ids[0])

    def attack(
        self,
        http: httpx.Client,
        endpoint: Endpoint,
        path: str,
        body: bytes,
        content_type: str = "application/json",
        params: dict[str, str] | None = None,
    ) -> int:
        """Send one request with the credential its path needs and check the answer."""
        headers = {**self.headers(path), "Content-Type": content_type}
        return answer_checked(
            http, endpoint.method, self.url + path, self.shape, content=body, headers=headers,
            params=params,
        )  # fmt: skip


# --- the shapes of each protocol's errors -----------------------------------------------------


def hub_shape(response: httpx.Response) -> None:
    """Cuckoo: `{error: {code, message, field?, request_id}}`; no 400, no 413, no 405."""
    assert response.status_code in (401, 403, 404, 409, 422, 429), response.status_code
    error = error_of(response)
    assert set(error) <= {"code", "message", "field", "request_id"}, error
    assert isinstance(error["request_id"], str) and error["request_id"], error


def gateway_shape(response: httpx.Response) -> None:
    """Minara: `{error: {code, message}}` (or a documented `{status}` body)."""
    body = response.json()
    if response.status_code == 409 and set(body) == {"status"}:
        return  # interject with nothing running: the one documented status body
    assert response.status_code in (400, 401, 404, 405, 409, 413, 429), response.status_code
    assert set(error_of(response)) == {"code", "message"}


def talkie_shape(response: httpx.Response) -> None:
    """Talkie §3: `{error: {code, message, retryable}}`."""
    error = error_of(response)
    assert set(error) == {"code", "message", "retryable"}, error
    assert isinstance(error["retryable"], bool)


# --- starting each ------------------------------------------------------------------------


@contextmanager
def hub(folder: Path) -> Iterator[Target]:
    """A dev-mode hub with an agent, its owner's DM, a message and a file."""
    config = HubConfig(dev=True, db_path=folder / "hub.sqlite3", stream_sweep_interval=0.05)
    with serve_hub(config) as url, httpx.Client(timeout=10) as http:
        agent = make_agent(http, url)
        sent = agent.send(http, text="hello")
        media = http.post(
            f"{url}/v1/agent/media", headers=agent.headers, params={"name": "a.txt"}, content=b"x"
        )
        ids = [agent.id, agent.conversation_id, sent.json()["message"]["id"]]
        ids += [media.json()["media"]["id"], agent.owner]
        state = {"agent": agent}

        def headers(path: str) -> dict[str, str]:
            if path.startswith("/v1/agent"):
                return state["agent"].headers
            return dev(agent.owner)

        def healthy(client: httpx.Client) -> None:
            assert client.get(f"{url}/healthz").status_code == 200
            current: Agent = state["agent"]
            if current.get(client, "/me").status_code != 200:  # a hostile request rebound it
                binding = client.post(
                    f"{url}/v1/mgmt/agents/{agent.id}/binding",
                    headers=dev(agent.owner),
                    json={"mode": "socket"},
                )
                assert binding.status_code == 201, binding.text
                state["agent"] = Agent(**{**vars(current), "secret": binding.json()["secret"]})
            assert state["agent"].get(client, "/me").status_code == 200

        real = dict(
            zip(["agent_id", "conversation_id", "message_id", "media_id"], ids, strict=False)
        )
        routes = create_hub(config).routes
        yield Target("hub", url, endpoints(routes), ids, headers, hub_shape, healthy, real, state)


@contextmanager
def gateway(folder: Path) -> Iterator[Target]:
    """A test-mode gateway with one session and one file."""
    config = GatewayConfig(test_mode=True, auth_token=TEST_TOKEN, db_path=folder / "gw.sqlite3")
    with serve_gateway(config) as url, httpx.Client(timeout=10) as http:
        session = http.post(f"{url}/v1/sessions", headers=AUTH, json={"title": "t"}).json()
        upload = http.post(f"{url}/v1/files", headers=AUTH, files={"file": ("a.txt", b"x")})
        ids = [session["data"]["id"], upload.json()["key"], "q_1", "key"]

        def healthy(client: httpx.Client) -> None:
            assert client.get(f"{url}/healthz").status_code == 200
            assert client.get(f"{url}/v1/sessions", headers=AUTH).status_code == 200

        real = {"session_id": ids[0], "key": ids[1]}
        routes = create_gateway(config).routes
        yield Target(
            "gateway", url, endpoints(routes), ids, lambda _: AUTH, gateway_shape, healthy, real
        )


@contextmanager
def talkie(folder: Path) -> Iterator[Target]:
    """A Talkie server in test mode with the demo agent and the dev token."""
    config = ServerConfig(
        test_mode=True, dev_token=TEST_TOKEN, demo_agent=True, db_path=folder / "t.sqlite3"
    )
    with serve_talkie(config) as url:

        def healthy(client: httpx.Client) -> None:
            assert client.get(f"{url}/api/talkie/status", headers=AUTH).status_code == 200

        routes = create_talkie(config).routes
        yield Target(
            "talkie", url, endpoints(routes), ["t_1", "r_1", "logo.png"], lambda _: AUTH,
            talkie_shape, healthy,
        )  # fmt: skip
