"""Which credential unlocks which part of the API, sign-in by e-mail code, devices, API keys."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from talkie_tui.devserver.cuckoo.ids import new_id
from tests.devserver.cuckoo.wire import bearer, dev, error_of, make_agent, sign_in


def test_email_code_sign_in(signed_in: tuple[str, dict[str, str]]) -> None:
    url, codes = signed_in
    with httpx.Client() as http:
        first = sign_in(http, url, codes, "Priya@Example.com")
        assert first["token"].startswith("ses_tok_") and first["is_new"] is True
        assert first["user"]["display_name"] == "priya"
        assert first["session"]["id"].startswith("ses_")
        again = sign_in(http, url, codes, "priya@example.com")
        assert again["is_new"] is False and again["user"]["id"] == first["user"]["id"]
        me = http.get(f"{url}/v1/client/me", headers=bearer(first["token"]))
        assert me.json()["user"]["id"] == first["user"]["id"]
        assert http.post(f"{url}/v1/auth/logout", headers=bearer(first["token"])).status_code == 204
        gone = http.get(f"{url}/v1/client/me", headers=bearer(first["token"]))
        assert gone.status_code == 401 and error_of(gone)["code"] == "invalid_credentials"


def test_wrong_codes_and_bad_addresses(signed_in: tuple[str, dict[str, str]]) -> None:
    url, codes = signed_in
    with httpx.Client() as http:
        assert http.post(f"{url}/v1/auth/email/start", json={"email": "x"}).status_code == 422
        assert http.post(f"{url}/v1/auth/email/start", json={"email": "a@b.co"}).status_code == 204
        for _ in range(5):
            response = http.post(
                f"{url}/v1/auth/email/verify", json={"email": "a@b.co", "code": "000000x"}
            )
            assert response.status_code == 401 and error_of(response)["code"] == "invalid_code"
        # Five wrong guesses spend the code: the right one no longer works.
        response = http.post(
            f"{url}/v1/auth/email/verify", json={"email": "a@b.co", "code": codes["a@b.co"]}
        )
        assert response.status_code == 401


def test_codes_are_rate_limited_per_address(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub()
    with httpx.Client() as http:
        answers = [
            http.post(f"{url}/v1/auth/email/start", json={"email": "r@b.co"}) for _ in range(6)
        ]
    assert [a.status_code for a in answers] == [204] * 5 + [429]
    assert error_of(answers[-1])["code"] == "too_many_codes"
    assert int(answers[-1].headers["Retry-After"]) > 0


def test_ten_devices_then_the_longest_unused_is_signed_out(
    signed_in: tuple[str, dict[str, str]],
) -> None:
    url, codes = signed_in
    with httpx.Client() as http:
        tokens = [sign_in(http, url, codes, "d@b.co", f"device {n}")["token"] for n in range(11)]
        assert http.get(f"{url}/v1/client/me", headers=bearer(tokens[0])).status_code == 401
        devices = http.get(f"{url}/v1/client/devices", headers=bearer(tokens[-1])).json()["devices"]
        assert len(devices) == 10
        assert [d["name"] for d in devices if d["current"]] == ["device 10"]
        one = next(d for d in devices if d["name"] == "device 5")
        assert (
            http.delete(
                f"{url}/v1/client/devices/{one['id']}", headers=bearer(tokens[-1])
            ).status_code
            == 204
        )
        assert http.get(f"{url}/v1/client/me", headers=bearer(tokens[5])).status_code == 401
        missing = http.delete(f"{url}/v1/client/devices/{one['id']}", headers=bearer(tokens[-1]))
        assert missing.status_code == 404 and error_of(missing)["code"] == "device_not_found"
        assert (
            http.delete(f"{url}/v1/client/devices", headers=bearer(tokens[-1])).status_code == 204
        )
        assert http.get(f"{url}/v1/client/me", headers=bearer(tokens[7])).status_code == 401
        assert http.get(f"{url}/v1/client/me", headers=bearer(tokens[-1])).status_code == 200


def test_scopes_of_the_three_credentials(http: httpx.Client, hub_url: str) -> None:
    agent = make_agent(http, hub_url)
    key = http.post(
        f"{hub_url}/v1/client/api-keys", headers=dev(agent.owner), json={"name": "ci"}
    ).json()["key"]
    assert key.startswith("mgt_tok_")
    # An API key: /v1/mgmt only.
    assert http.get(f"{hub_url}/v1/mgmt/agents", headers=bearer(key)).status_code == 200
    refused = http.get(f"{hub_url}/v1/client/me", headers=bearer(key))
    assert refused.status_code == 403 and error_of(refused)["code"] == "user_required"
    refused = http.get(f"{hub_url}/v1/agent/me", headers=bearer(key))
    assert refused.status_code == 403 and error_of(refused)["code"] == "agent_required"
    # A binding secret: /v1/agent only.
    assert agent.get(http, "/me").json()["agent"]["id"] == agent.id
    for path in ("/v1/client/me", "/v1/mgmt/agents"):
        refused = http.get(f"{hub_url}{path}", headers=agent.headers)
        assert refused.status_code == 403 and error_of(refused)["code"] == "user_required"
    # Missing and wrong credentials.
    missing = http.get(f"{hub_url}/v1/agent/me")
    assert missing.status_code == 401 and error_of(missing)["code"] == "missing_credentials"
    for token in ("ses_tok_nope", "bnd_sec_nope", "mgt_tok_nope", "something"):
        wrong = http.get(f"{hub_url}/v1/agent/me", headers=bearer(token))
        assert wrong.status_code == 401 and error_of(wrong)["code"] == "invalid_credentials"


def test_the_dev_header_needs_dev_mode(cuckoo_hub: Callable[..., str]) -> None:
    url = cuckoo_hub(dev=False)
    with httpx.Client() as http:
        response = http.get(f"{url}/v1/client/me", headers=dev(new_id("usr")))
        assert response.status_code == 401
        assert error_of(response)["code"] == "missing_credentials"


def test_the_dev_header_makes_the_user_with_a_name(http: httpx.Client, hub_url: str) -> None:
    user = new_id("usr")
    me = http.get(f"{hub_url}/v1/client/me", headers=dev(user)).json()["user"]
    assert me["id"] == user and me["display_name"]
    bad = http.get(f"{hub_url}/v1/client/me", headers=dev("usr_nope"))
    assert bad.status_code == 422 and error_of(bad)["code"] == "invalid_id"
    assert (
        error_of(http.post(f"{hub_url}/v1/auth/logout", headers=dev(user)))["code"] == "no_session"
    )


def test_api_keys_are_listed_and_revoked(http: httpx.Client, hub_url: str) -> None:
    user = new_id("usr")
    made = http.post(f"{hub_url}/v1/client/api-keys", headers=dev(user), json={"name": "ci"}).json()
    listed = http.get(f"{hub_url}/v1/client/api-keys", headers=dev(user)).json()["api_keys"]
    assert [k["id"] for k in listed] == [made["api_key"]["id"]] and "key" not in listed[0]
    path = f"{hub_url}/v1/client/api-keys/{made['api_key']['id']}"
    assert http.delete(path, headers=dev(user)).status_code == 204
    assert http.get(f"{hub_url}/v1/mgmt/agents", headers=bearer(made["key"])).status_code == 401
