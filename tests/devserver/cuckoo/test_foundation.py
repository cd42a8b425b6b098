"""Ids, credentials, the error envelope and the rules every request body follows."""

from __future__ import annotations

import hashlib
import re

import httpx

from talkie_tui.devserver.cuckoo import ids
from tests.devserver.cuckoo.wire import dev, error_of, make_agent

ID = re.compile(r"[a-z]{3}_[0-9abcdefghjkmnpqrstvwxyz]{26}")


def test_ids_are_prefixed_crockford_uuid7() -> None:
    first, second = ids.new_id("msg"), ids.new_id("msg")
    assert ID.fullmatch(first) and first.startswith("msg_") and first != second
    assert ids.is_id(first, "msg") and not ids.is_id(first, "evt")
    assert not ids.is_id("msg_" + "u" * 26, "msg")  # u is not in the alphabet
    # The first 48 bits are the time in milliseconds: an id of a later millisecond sorts after.
    assert first[4:14] <= second[4:14]
    number = 0
    for char in first[4:]:
        number = number * 32 + ids.ALPHABET.index(char)
    assert (number >> 76) & 0xF == 7  # the version nibble
    assert (number >> 62) & 0b11 == 0b10  # the variant


def test_ids_made_in_one_millisecond_still_sort_in_the_order_they_were_made() -> None:
    made = [ids.new_id("msg") for _ in range(5000)]  # many share a millisecond
    assert len({m[4:14] for m in made}) < len(made)
    assert made == sorted(made) and len(set(made)) == len(made)


def test_credentials_have_prefixes_and_256_bits() -> None:
    secret = ids.new_secret(ids.BINDING_SECRET)
    assert secret.startswith("bnd_sec_") and len(secret) == len("bnd_sec_") + 52
    assert ids.secret_hash(secret) == hashlib.sha256(secret.encode()).hexdigest()


def test_unknown_route_and_wrong_method(http: httpx.Client, hub_url: str) -> None:
    response = http.get(f"{hub_url}/v1/nowhere")
    assert response.status_code == 404
    assert error_of(response)["code"] == "route_not_found"
    response = http.delete(f"{hub_url}/v1/auth/email/start")
    assert response.status_code == 422
    assert error_of(response)["code"] == "method_not_allowed"


def test_bodies_are_json_objects_with_known_fields(http: httpx.Client, hub_url: str) -> None:
    user = ids.new_id("usr")
    url = f"{hub_url}/v1/mgmt/agents"
    response = http.post(url, headers={**dev(user), "Content-Type": "text/plain"}, content=b"{}")
    assert response.status_code == 422
    assert error_of(response)["code"] == "unsupported_media_type"
    response = http.post(url, headers=dev(user), json={"handle": "abc", "display_nam": "x"})
    assert response.status_code == 422
    error = error_of(response)
    assert (error["code"], error["field"]) == ("unknown_field", "display_nam")
    response = http.post(url, headers=dev(user), json=[1, 2])
    assert response.status_code == 422 and error_of(response)["code"] == "invalid_json"
    response = http.post(
        url, headers={**dev(user), "Content-Type": "application/json"}, content=b"{nope"
    )
    assert response.status_code == 422 and error_of(response)["code"] == "invalid_json"


def test_a_body_over_one_mib_is_422_not_413(http: httpx.Client, hub_url: str) -> None:
    user = ids.new_id("usr")
    big = b'{"handle": "' + b"a" * (1024 * 1024) + b'"}'
    response = http.post(
        f"{hub_url}/v1/mgmt/agents",
        headers={**dev(user), "Content-Type": "application/json"},
        content=big,
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "body_too_large"


def test_every_error_quotes_its_request_id(http: httpx.Client, hub_url: str) -> None:
    response = http.get(f"{hub_url}/v1/client/me")
    assert response.status_code == 401
    assert error_of(response)["request_id"] == response.headers["x-request-id"]


def test_a_bad_id_in_a_path_is_invalid_id(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    response = agent.get(http, "/conversations/cnv_nope")
    assert response.status_code == 422 and error_of(response)["code"] == "invalid_id"


def test_the_hub_runs_on_httptools_and_uvloop_unless_told_not_to() -> None:
    from talkie_tui.devserver.cuckoo.config import HubConfig as Config
    from talkie_tui.devserver.cuckoo.runner import socket_options

    fast = socket_options(Config())
    assert (fast["http"], fast["loop"]) == ("httptools", "uvloop")
    plain = socket_options(Config(speedups=False))
    assert (plain["http"], plain["loop"]) == ("h11", "asyncio")
