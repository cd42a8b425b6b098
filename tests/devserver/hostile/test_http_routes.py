"""Every HTTP route of the three reference servers under hostile input: crashing JSON, any
JSON, arbitrary bytes, oversized bodies, odd paging values and ids.

The properties, for every answer: never a 5xx; an error is in the protocol's own shape (the
hub's envelope with a request id and no 400/413, the gateway's `{error: {code, message}}`, the
Talkie §3 body); and the server answers a normal request afterwards.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.devserver.hostile.kit import (
    HOSTILE_FILENAMES,
    MULTIPART,
    bodies,
    content_types,
    fill,
    hostile_settings,
    ids_among,
    multipart_bodies,
    multipart_body,
    queries,
)
from tests.devserver.hostile.payloads import DEEP, HUGE_NUMBER, LONE_SURROGATE, with_field
from tests.devserver.hostile.raw_http import declared_but_not_sent
from tests.devserver.hostile.targets import Target

CRASHERS = [
    DEEP.encode(),
    HUGE_NUMBER.encode(),
    with_field("text", LONE_SURROGATE).encode(),
    with_field("message", HUGE_NUMBER).encode(),
    with_field("email", "[" * 70 + "]" * 70).encode(),
    b"\xff\xfe\x00{",
    b'{"a": 1e999}',
]


@pytest.fixture(scope="module", params=["hub", "gateway", "talkie"])
def target(request: pytest.FixtureRequest) -> Target:
    """Each server in turn."""
    found: Target = request.getfixturevalue(request.param)
    return found


@pytest.fixture(scope="module")
def http() -> Any:
    """One client for a module's requests."""
    with httpx.Client(timeout=15) as client:
        yield client


def test_every_route_refuses_crashing_json(target: Target, http: httpx.Client) -> None:
    for endpoint in target.endpoints:
        path = fill(endpoint.path, target.real_id)
        for body in CRASHERS:
            target.attack(http, endpoint, path, body)
        target.healthy(http)


def test_every_route_refuses_hostile_file_names(target: Target, http: httpx.Client) -> None:
    for endpoint in target.endpoints:
        if endpoint.method != "POST":
            continue
        path = fill(endpoint.path, target.real_id)
        for name in HOSTILE_FILENAMES:
            body = multipart_body(name, "text/plain", b"words")
            target.attack(http, endpoint, path, body, MULTIPART)
    target.healthy(http)


def test_every_route_holds_a_declared_256_mib_body(target: Target, http: httpx.Client) -> None:
    for endpoint in target.endpoints:
        path = fill(endpoint.path, target.real_id)
        status, body = declared_but_not_sent(
            target.url, endpoint.method, path, 256 * 1024 * 1024, target.headers(path)
        )
        assert status < 500, (endpoint, status)
        if status >= 400:
            target.shape(httpx.Response(status, content=body))
    target.healthy(http)


@hostile_settings(80)
@given(data=st.data())
def test_any_request_on_any_route(target: Target, http: httpx.Client, data: st.DataObject) -> None:
    endpoint = data.draw(st.sampled_from(target.endpoints), label="endpoint")
    ids = ids_among(target.ids)
    path = fill(endpoint.path, lambda name: data.draw(ids, label=name))
    params = data.draw(queries, label="query")
    if data.draw(st.booleans(), label="multipart"):
        body, content_type = data.draw(multipart_bodies(), label="form"), MULTIPART
    else:
        body = data.draw(bodies, label="body")
        content_type = data.draw(content_types, label="content type")
    target.attack(http, endpoint, path, body, content_type, params)
    target.healthy(http)
