"""Credentials: a binding secret is shown once and stored only as a hash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cuckoo_peer.conftest import handle


async def test_a_secret_is_shown_once(hub: str, people: Any) -> None:
    owner = people()
    agent = await owner.create_agent(handle(), "Once")
    binding, secret = await owner.bind(agent["id"], "socket")
    assert "secret" not in binding
    rest = secret.removeprefix("bnd_sec_")
    assert len(rest) * 5 >= 256, secret  # 256 bits, at least as base32
    for path in ("/v1/mgmt/agents", f"/v1/mgmt/agents/{agent['id']}"):
        answer = await owner.http.get(path)
        assert answer.status_code == 200, answer.text
        assert rest not in answer.text, path
    _binding, other = await owner.bind(agent["id"], "socket")
    assert other != secret


async def test_a_secret_is_stored_only_as_a_hash(
    hub: str, people: Any, backends: Any, tmp_path: Path
) -> None:
    owner = people()
    agent = await owner.create_agent(handle(), "Hashed")
    _binding, secret = await owner.bind(agent["id"], "socket")
    backend = backends(secret)
    await backend.connect()
    assert (await backend.me())["agent"]["id"] == agent["id"]
    await backend.close()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.startswith("cuckoo-") for p in files), files  # the hub's own database
    rest = secret.removeprefix("bnd_sec_").encode()
    for path in files:
        data = path.read_bytes()
        assert rest not in data, path
        assert rest.upper() not in data, path
