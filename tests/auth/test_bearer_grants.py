"""A gateway's bearer token kept like any sign-in, for its own origin only."""

from __future__ import annotations

import json

from talkie_tui.auth.bearer_grants import find_bearer, keep_bearer
from talkie_tui.auth.file_store import FileStore
from talkie_tui.auth.grants import StoredGrant
from talkie_tui.auth.signin import find_grant
from talkie_tui.auth.store import MemoryStore


def test_a_kept_token_comes_back_for_its_origin_only() -> None:
    store = MemoryStore()
    keep_bearer(store, "minara:gw", "http://localhost:8080/v1/sessions", "gw-secret")

    assert find_bearer("minara:gw", "http://localhost:8080", store) == ("gw-secret", store)
    assert find_bearer("minara:gw", "http://localhost:8081", store) is None
    assert find_bearer("minara:gw", "https://localhost:8080", store) is None


def test_a_bearer_token_is_never_taken_for_an_oauth_grant() -> None:
    store = MemoryStore()
    keep_bearer(store, "shared-id", "http://127.0.0.1:9", "gw-secret")

    assert find_grant("shared-id", store) is None
    assert find_grant("shared-id", store, kind="bearer") is not None


def test_an_oauth_grant_is_never_taken_for_a_bearer_token() -> None:
    store = MemoryStore()
    store.save("shared-id", StoredGrant("refresh", "http://127.0.0.1:9", "client"))

    assert find_bearer("shared-id", "http://127.0.0.1:9", store) is None


def test_grants_round_trip_and_older_grants_read_as_oauth() -> None:
    bearer = StoredGrant("tok", "http://127.0.0.1:9", "talkie", kind="bearer")
    assert StoredGrant.from_json(bearer.to_json()) == bearer
    oauth = StoredGrant("refresh", "https://issuer", "client", "openid")
    assert "kind" not in json.loads(oauth.to_json())  # what older talkies wrote and read
    assert StoredGrant.from_json(oauth.to_json()) == oauth
    assert StoredGrant.from_dict({**bearer.to_dict(), "kind": "magic"}) is None


def test_the_token_is_not_in_the_grants_repr() -> None:
    assert "tok-value" not in repr(StoredGrant("tok-value", "http://x", "talkie", kind="bearer"))


def test_a_token_kept_in_the_private_file_survives_a_restart() -> None:
    keep_bearer(FileStore(), "minara:gw", "http://localhost:8080", "gw-secret")

    assert find_bearer("minara:gw", "http://localhost:8080", FileStore()) is not None
