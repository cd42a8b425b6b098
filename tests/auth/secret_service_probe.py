"""Run one token-store step in its own process, for the real Secret Service tests.

Usage: python secret_service_probe.py OP [SERVER_ID [GRANT_JSON]], OP being
status, status-auto (keyring picks its backend itself), save, load, delete or raw (what
the Secret Service itself holds, read with secretstorage). Prints one JSON line; a
TokenStoreError is printed too (as "error"), so the steps after it still run.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import closing
from typing import Any

from talkie_tui.auth.keyring_store import KEYRING_SERVICE
from talkie_tui.auth.store import (
    StoredGrant,
    TokenStoreError,
    keyring_status,
    open_store,
)


def raw_items(server_id: str) -> list[dict[str, Any]]:
    """The Secret Service items of `server_id`, read without keyring."""
    import secretstorage

    with closing(secretstorage.dbus_init()) as connection:
        collection = secretstorage.get_default_collection(connection)
        items = collection.search_items({"service": KEYRING_SERVICE, "username": server_id})
        return [
            {
                "label": item.get_label(),
                "attributes": item.get_attributes(),
                "secret": item.get_secret().decode("utf-8"),
            }
            for item in items
        ]


def step(op: str, args: list[str]) -> dict[str, Any]:
    """Do `op` and describe the outcome."""
    if op in ("status", "status-auto"):
        if op == "status-auto":
            os.environ.pop("PYTHON_KEYRING_BACKEND", None)
        status = keyring_status(timeout=20)
        return {"available": status.available, "backend": status.backend, "reason": status.reason}
    server_id = args[0]
    if op == "raw":
        return {"items": raw_items(server_id)}
    store = open_store("keyring")
    if op == "save":
        grant = StoredGrant.from_json(args[1])
        assert grant is not None, "the test passes a valid grant"
        store.save(server_id, grant)
        return {"saved": store.describe()}
    if op == "load":
        loaded = store.load(server_id)
        return {"grant": None if loaded is None else loaded.to_dict()}
    if op == "delete":
        store.delete(server_id)
        return {"deleted": True}
    raise SystemExit(f"unknown step {op}")


def main() -> None:
    op, args = sys.argv[1], sys.argv[2:]
    try:
        outcome = step(op, args)
    except TokenStoreError as error:
        outcome = {"error": type(error).__name__, "message": error.message}
    print(json.dumps({"op": op, **outcome}), flush=True)


if __name__ == "__main__":
    main()
