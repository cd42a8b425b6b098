"""Where sign-in tokens are kept: the system keyring, a private file, or this session only.

One entry per Talkie `serverId` holds the grant: the refresh token and what it belongs to, never
the access token (`grants.py`). This module chooses the store `Settings.token_storage` names
(`open_store`), keeps the session-only one (`MemoryStore`), and signs out of all of them
(`forget_everywhere`); the file is `file_store.py`, the keyring `keyring_store.py`, which uses
the keyring only when it really protects secrets. Nothing falls back to plaintext on its own.
"""

from __future__ import annotations

import contextlib
import threading

from talkie_tui.auth.file_store import FileStore
from talkie_tui.auth.grants import (
    GrantKind,
    NoKeyringError,
    StoredGrant,
    TokenStore,
    TokenStoreError,
    check_server_id,
)
from talkie_tui.auth.keyring_store import (
    KeyringStatus,
    KeyringStore,
    keyring_status,
    open_keyring_store,
)
from talkie_tui.i18n import _

# Besides its own names, what a caller of `open_store` deals in, wherever it is defined.
__all__ = [
    "FileStore",
    "ForgetIncomplete",
    "KeyringStatus",
    "KeyringStore",
    "MemoryStore",
    "NoKeyringError",
    "StoredGrant",
    "TokenStore",
    "TokenStoreError",
    "find_grant",
    "forget_everywhere",
    "keyring_status",
    "open_store",
]


class ForgetIncomplete(TokenStoreError):
    """`forget_everywhere` could not remove the sign-in from every store that may hold it."""

    def __init__(self, removed: list[str], failures: list[str]) -> None:
        super().__init__(
            _("the sign-in could not be removed from {stores}").format(stores="; ".join(failures))
        )
        self.removed = removed
        self.failures = failures


class MemoryStore:
    """Grants kept in this process only: signed out when talkie exits.

    Every instance shares one dictionary, so each client in the process sees the same sign-ins.
    """

    kind = "session"

    def describe(self) -> str:
        """Where the grants are, in words for the user."""
        return _("memory only (signed out when talkie exits)")

    def load(self, server_id: str) -> StoredGrant | None:
        """The grant kept for `server_id` in this session, or None."""
        with _SESSION_LOCK:
            return _SESSION_GRANTS.get(server_id)

    def save(self, server_id: str, grant: StoredGrant) -> None:
        """Keep `grant` for `server_id` until talkie exits."""
        check_server_id(server_id)
        with _SESSION_LOCK:
            _SESSION_GRANTS[server_id] = grant

    def delete(self, server_id: str) -> None:
        """Remove the grant of `server_id`, if any."""
        self.discard(server_id)

    def discard(self, server_id: str) -> bool:
        """Remove the grant of `server_id`; True when there was one."""
        with _SESSION_LOCK:
            return _SESSION_GRANTS.pop(server_id, None) is not None


_SESSION_GRANTS: dict[str, StoredGrant] = {}
_SESSION_LOCK = threading.Lock()


def open_store(kind: str) -> TokenStore:
    """The store `Settings.token_storage` names; NoKeyringError(reason) when the keyring is out."""
    if kind == "keyring":
        return open_keyring_store()
    if kind == "file":
        return FileStore()
    if kind == "session":
        return MemoryStore()
    raise ValueError(f'unknown token storage "{kind}" (expected "keyring", "file" or "session")')


def forget_everywhere(server_id: str) -> list[str]:
    """Remove the server's sign-in from every store holding it; the `describe()` of each.

    Sign-out uses this whatever the setting is, so nothing lingers where an earlier setting
    kept it. A store that fails does not stop the others: ForgetIncomplete then lists it.
    """
    stores: list[MemoryStore | FileStore | KeyringStore] = [MemoryStore(), FileStore()]
    with contextlib.suppress(NoKeyringError):  # no usable keyring: nothing kept there
        stores.append(open_keyring_store())
    removed: list[str] = []
    failures: list[str] = []
    for store in stores:
        try:
            if store.discard(server_id):
                removed.append(store.describe())
        except TokenStoreError as error:
            failures.append(f"{store.describe()}: {error.message}")
    if failures:
        raise ForgetIncomplete(removed, failures)
    return removed


_STORE_KINDS = ("keyring", "file", "session")


def _stores(preferred: TokenStore | None) -> list[TokenStore]:
    stores = [preferred] if preferred is not None else []
    for kind in _STORE_KINDS:
        if preferred is not None and preferred.kind == kind:
            continue
        with contextlib.suppress(TokenStoreError):
            stores.append(open_store(kind))
    return stores


def find_grant(
    server_id: str, preferred: TokenStore | None = None, *, kind: GrantKind = "refresh"
) -> tuple[StoredGrant, TokenStore] | None:
    """The stored sign-in of `server_id` of this kind and the store holding it (the preferred
    one first): an OAuth grant, or a bearer token kept as it is."""
    for store in _stores(preferred):
        try:
            grant = store.load(server_id)
        except TokenStoreError:
            continue
        if grant is not None and grant.kind == kind:
            return grant, store
    return None
