"""Where sign-in tokens are kept: the system keyring, a private file, or this session only.

One entry per Talkie `serverId` holds the refresh token and what it belongs to (issuer, client
id, scope) as compact JSON under 1000 characters, because Windows' Credential Manager takes
about 1280. The access token is never stored.

The keyring is used only when it really protects secrets. keyring falls back to backends that
do not (`fail`, `null`, or keyrings.alt's plaintext file, which merely installing keyrings.alt
makes the default on a headless machine), so `keyring_status` treats those as "no keyring" and
`open_store("keyring")` raises `NoKeyringError` with the reason: the user then chooses the 0600
file or this session only. Nothing falls back to plaintext on its own.

Keyring calls may block (D-Bus without an answer, an unlock prompt nobody sees): every one runs
on a daemon thread and is given up after a timeout.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import keyring
import keyring.errors
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null

from talkie_tui.config import config_dir, write_private_file
from talkie_tui.i18n import N_, _

__all__ = [
    "DETECT_TIMEOUT",
    "KEYRING_SERVICE",
    "KEYRING_TIMEOUT",
    "MAX_GRANT_CHARS",
    "TOKENS_FILE",
    "FileStore",
    "ForgetIncomplete",
    "GrantTooLarge",
    "KeyringStatus",
    "KeyringStore",
    "MemoryStore",
    "NoKeyringError",
    "StoredGrant",
    "TokenStore",
    "TokenStoreError",
    "forget_everywhere",
    "keyring_status",
    "open_store",
]

KEYRING_SERVICE = "talkie"
MAX_GRANT_CHARS = 1000
"""The longest grant JSON kept in a keyring entry (Windows allows about 1280 characters)."""
TOKENS_FILE = "tokens.json"
DETECT_TIMEOUT = 5.0
"""Seconds to wait for keyring to find its backend (it asks D-Bus on Linux)."""
KEYRING_TIMEOUT = 60.0
"""Seconds to wait for one keyring read or write; long enough to answer an unlock prompt."""

_GRANT_VERSION = 1
_FILE_VERSION = 1
_T = TypeVar("_T")
# What a keyring call was doing, as an infinitive that fits "talkie could not …" (N_: each
# message translates it where it is used).
_READ = N_("read the sign-in")
_STORE = N_("store the sign-in")
_DELETE = N_("delete the sign-in")
_NO_BACKEND = N_("keyring found no backend that can keep secrets on this system")


# --- errors ----------------------------------------------------------------------------------


class TokenStoreError(Exception):
    """A sign-in could not be read, kept or removed; `message` says why in plain words."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NoKeyringError(TokenStoreError):
    """No system keyring that protects secrets is usable here; `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(_("there is no usable system keyring: {reason}").format(reason=reason))
        self.reason = reason


class GrantTooLarge(TokenStoreError, ValueError):
    """The grant's JSON is longer than a keyring entry may safely be (`MAX_GRANT_CHARS`)."""

    def __init__(self, size: int) -> None:
        super().__init__(
            _(
                "the sign-in is {size} characters long, more than the {limit} a "
                "keyring entry may hold on every system"
            ).format(size=size, limit=MAX_GRANT_CHARS)
        )
        self.size = size


class ForgetIncomplete(TokenStoreError):
    """`forget_everywhere` could not remove the sign-in from every store that may hold it."""

    def __init__(self, removed: list[str], failures: list[str]) -> None:
        super().__init__(
            _("the sign-in could not be removed from {stores}").format(stores="; ".join(failures))
        )
        self.removed = removed
        self.failures = failures


# --- the grant -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredGrant:
    """A refresh token and what it belongs to: enough to get a new access token silently."""

    # Kept out of repr so a grant in a log line or a traceback does not leak the token.
    refresh_token: str = field(repr=False)
    issuer: str
    client_id: str
    scope: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The grant as a JSON object (what both the keyring entry and the file hold)."""
        return {
            "v": _GRANT_VERSION,
            "refresh_token": self.refresh_token,
            "issuer": self.issuer,
            "client_id": self.client_id,
            "scope": self.scope,
        }

    def to_json(self) -> str:
        """Compact JSON for one keyring entry; GrantTooLarge when over `MAX_GRANT_CHARS`."""
        # ASCII only, so characters, UTF-8 bytes and UTF-16 units (Windows) all count the same.
        text = json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=True)
        if len(text) > MAX_GRANT_CHARS:
            raise GrantTooLarge(len(text))
        return text

    @classmethod
    def from_dict(cls, data: object) -> StoredGrant | None:
        """The grant in a decoded JSON object, or None when it is not a usable grant."""
        if not isinstance(data, dict) or data.get("v", _GRANT_VERSION) != _GRANT_VERSION:
            return None
        texts = [data.get(key) for key in ("refresh_token", "issuer", "client_id")]
        scope = data.get("scope", "")
        if not all(isinstance(text, str) and text for text in texts) or not isinstance(scope, str):
            return None
        refresh_token, issuer, client_id = texts
        return cls(str(refresh_token), str(issuer), str(client_id), scope)

    @classmethod
    def from_json(cls, text: str) -> StoredGrant | None:
        """The grant in `text`, or None for unusable or corrupt content; never raises."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            return None
        return cls.from_dict(data)


# --- the stores ------------------------------------------------------------------------------


class TokenStore(Protocol):
    """Somewhere a grant per server is kept: the keyring, a private file or memory."""

    kind: str
    """"keyring", "file" or "session", as in `Settings.token_storage`."""

    def describe(self) -> str:
        """Where the grants are, in words for the user."""
        ...

    def load(self, server_id: str) -> StoredGrant | None:
        """The grant kept for `server_id`, or None (also when what is kept is unusable)."""
        ...

    def save(self, server_id: str, grant: StoredGrant) -> None:
        """Keep `grant` for `server_id`, replacing any earlier one."""
        ...

    def delete(self, server_id: str) -> None:
        """Remove the grant of `server_id`; nothing happens when there is none."""
        ...


def _check_server_id(server_id: str) -> None:
    if not server_id:
        raise ValueError("a server id is required to keep a sign-in")


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
        _check_server_id(server_id)
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


class FileStore:
    """Grants in a JSON file readable only by the user (0600), in the config folder.

    Each change re-reads the file and replaces it atomically, so other servers' grants and a
    crash mid-write are safe. Two processes changing it at once must hold the caller's lock.
    """

    kind = "file"

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_dir() / TOKENS_FILE
        self.warnings: list[str] = []
        """Problems found in the file (unreadable, too open), in words for the user."""

    def describe(self) -> str:
        """Where the grants are, in words for the user."""
        return _("the file {path} (readable only by you)").format(path=self.path)

    def load(self, server_id: str) -> StoredGrant | None:
        """The grant kept for `server_id`, or None (also when the file or entry is unusable)."""
        return StoredGrant.from_dict(self._read().get(server_id))

    def save(self, server_id: str, grant: StoredGrant) -> None:
        """Keep `grant` for `server_id`; TokenStoreError when the file cannot be written."""
        _check_server_id(server_id)
        grants = self._read()
        grants[server_id] = grant.to_dict()
        self._write(grants)

    def delete(self, server_id: str) -> None:
        """Remove the grant of `server_id`, if any."""
        self.discard(server_id)

    def discard(self, server_id: str) -> bool:
        """Remove the grant of `server_id` (even an unusable one); True when there was one."""
        grants = self._read()
        if server_id not in grants:
            return False
        del grants[server_id]
        self._write(grants)
        return True

    def _warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def _read(self) -> dict[str, Any]:
        """Every entry of the file, undecoded (so a save keeps entries this version cannot use)."""
        try:
            text = self._read_private()
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise TokenStoreError(
                _("{path} could not be read ({error})").format(
                    path=self.path, error=_os_words(error)
                )
            ) from error
        if text is None:
            return {}
        try:
            document = json.loads(text)
        except (ValueError, RecursionError) as error:
            self._warn(
                _("{path} is not valid JSON ({error}); its sign-ins are ignored.").format(
                    path=self.path, error=error
                )
            )
            return {}
        grants = document.get("grants") if isinstance(document, dict) else None
        if not isinstance(grants, dict) or document.get("version") != _FILE_VERSION:
            self._warn(
                _("{path} is not a file of sign-ins talkie can read; it is ignored.").format(
                    path=self.path
                )
            )
            return {}
        return grants

    def _read_private(self) -> str | None:
        """The file's text after making sure only the user can read it; None to ignore it."""
        if os.name != "posix":
            return self.path.read_text(encoding="utf-8")
        # O_NOFOLLOW and fstat: check the very file that is read, not what a symlink points to;
        # O_NONBLOCK: a FIFO put in its place must not block the open.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            descriptor = os.open(self.path, flags)
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
            # Ignored rather than refused, so that the next save replaces the link with a file.
            self._warn(
                _("{path} is a symbolic link; its sign-ins are ignored.").format(path=self.path)
            )
            return None
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            self._warn(
                _("{path} is not a regular file; its sign-ins are ignored.").format(path=self.path)
            )
            return None
        with os.fdopen(descriptor, "rb") as file:
            info = os.fstat(file.fileno())
            if info.st_uid != os.getuid():
                self._warn(
                    _("{path} belongs to another user; its sign-ins are ignored.").format(
                        path=self.path
                    )
                )
                return None
            if info.st_mode & 0o077:
                # Too late to keep it secret, but not to stop it staying readable. Read anyway:
                # refusing would not undo a copy, and would only make the user sign in again.
                try:
                    os.fchmod(file.fileno(), 0o600)
                    warning = _(
                        "{path} could be read by other users; it is now readable only by you. "
                        "If someone may have copied it, sign out and sign in again."
                    ).format(path=self.path)
                except OSError as error:
                    warning = _(
                        "{path} could be read by other users; its permissions could not be "
                        "changed ({error}). If someone may have copied it, sign out and sign "
                        "in again."
                    ).format(path=self.path, error=_os_words(error))
                self._warn(warning)
            return file.read().decode("utf-8", errors="replace")

    def _write(self, grants: dict[str, Any]) -> None:
        try:
            if not grants:
                # Signed out of everything: leave no file behind.
                self.path.unlink(missing_ok=True)
                return
            document = {"version": _FILE_VERSION, "grants": grants}
            write_private_file(self.path, json.dumps(document, indent=2, sort_keys=True) + "\n")
        except OSError as error:
            raise TokenStoreError(
                _("{path} could not be written ({error})").format(
                    path=self.path, error=_os_words(error)
                )
            ) from error


def _os_words(error: OSError) -> str:
    return error.strerror or str(error)


# --- the keyring -----------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyringStatus:
    """Whether the system keyring can keep sign-ins, which backend it is, and if not, why."""

    available: bool
    backend: str
    reason: str = ""


class _TimedOut(Exception):
    pass


class _Call(Generic[_T]):
    """A function running on a daemon thread, so a caller can stop waiting for it.

    A daemon thread, not an executor: a call stuck on D-Bus must not keep talkie from exiting.
    """

    def __init__(self, function: Callable[[], _T], name: str) -> None:
        self._function = function
        self._done = threading.Event()
        self._result: _T | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def _run(self) -> None:
        try:
            self._result = self._function()
        except BaseException as error:  # handed to the waiting thread
            self._error = error
        finally:
            self._done.set()

    @property
    def done(self) -> bool:
        """True once the function returned or raised."""
        return self._done.is_set()

    def wait(self, timeout: float) -> _T:
        """The function's result (or its exception); _TimedOut if it is still running."""
        if not self._done.wait(timeout):
            raise _TimedOut
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # set when no error was raised


@dataclass(frozen=True)
class _Resolved:
    backend: KeyringBackend | None
    """The backend to read and write, when it is usable."""
    status: KeyringStatus


_detect_lock = threading.Lock()
_detecting: _Call[_Resolved] | None = None


def _backend_name(backend: KeyringBackend) -> str:
    try:
        return str(type(backend).name)
    except Exception:  # a third-party backend's name property: never worth a failure
        return type(backend).__name__


def _why_no_backend() -> str:
    """Why keyring fell back to its `fail` backend, as precisely as can be told."""
    forced = os.environ.get("PYTHON_KEYRING_BACKEND", "").strip()
    if forced:
        return _("PYTHON_KEYRING_BACKEND selects {backend}, which cannot keep secrets").format(
            backend=forced
        )
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            return _(
                "no Secret Service is running (DBUS_SESSION_BUS_ADDRESS is unset): "
                "common over SSH and in containers"
            )
        try:
            from keyring.backends import SecretService

            SecretService.Keyring.priority  # noqa: B018  # raises the reason it is not viable
        except Exception as error:
            return _("no Secret Service answered on D-Bus ({error})").format(error=error)
    return _(_NO_BACKEND)


def _unusable_reason(backend: KeyringBackend) -> str | None:
    """Why `backend` must not keep sign-ins, or None when it protects them."""
    cls = type(backend)
    name = _backend_name(backend)
    where = f"{cls.__module__}.{cls.__qualname__}"
    if isinstance(backend, fail.Keyring):
        return _why_no_backend()
    if isinstance(backend, null.Keyring):
        return _(
            "keyring is switched off (its null backend is selected, e.g. by `keyring --disable`)"
        )
    if "plaintext" in where.lower():
        text = _("the keyring backend is {name} ({where}), which keeps passwords unencrypted")
        return text.format(name=name, where=where)
    if cls.__module__.startswith("keyrings.alt") and "encrypt" in where.lower():
        text = _(
            "the keyring backend is {name} ({where}), which asks for its master password on "
            "the terminal, where talkie cannot ask"
        )
        return text.format(name=name, where=where)
    try:
        priority = float(cls.priority)
    except Exception as error:
        text = _("the keyring backend {name} is not usable here ({error})")
        return text.format(name=name, error=error)
    if priority < 1:
        # keyring's own rule (keyring.core.recommended): below 1 is "not recommended".
        text = _("the keyring backend {name} is not one keyring recommends (priority {priority})")
        return text.format(name=name, priority=f"{priority:g}")
    return None


def _detect() -> _Resolved:
    """Find keyring's backend and decide whether it may keep sign-ins (may block on D-Bus)."""
    try:
        chosen = keyring.get_keyring()
    except Exception as error:
        # PYTHON_KEYRING_BACKEND or keyringrc.cfg names a backend that is missing or not viable.
        forced = os.environ.get("PYTHON_KEYRING_BACKEND", "").strip()
        reason = (
            _("PYTHON_KEYRING_BACKEND selects {backend}, which cannot be used here ({error})")
            if forced
            else _("keyring's configuration could not be loaded ({error})")
        ).format(backend=forced, error=error)
        return _Resolved(None, KeyringStatus(False, forced or "unknown", reason))
    backend = chosen
    if isinstance(chosen, chainer.ChainerBackend):
        # The chainer writes to its highest-priority backend but reads from all of them (a
        # plaintext file too); talkie talks to that first backend alone.
        chained = list(chosen.backends)
        if not chained:
            return _Resolved(None, KeyringStatus(False, _backend_name(chosen), _(_NO_BACKEND)))
        backend = chained[0]
    unusable = _unusable_reason(backend)
    status = KeyringStatus(unusable is None, _backend_name(backend), unusable or "")
    return _Resolved(backend if unusable is None else None, status)


def _resolve(timeout: float) -> _Resolved:
    """`_detect` bounded by `timeout`; one detection at a time however many callers wait."""
    global _detecting
    with _detect_lock:
        call = _detecting
        if call is None or call.done:
            call = _detecting = _Call(_detect, "talkie-keyring-detect")
    try:
        return call.wait(timeout)
    except _TimedOut:
        reason = _(
            "the system keyring did not answer within {seconds} seconds "
            "(D-Bus or the Secret Service is not responding)"
        ).format(seconds=f"{timeout:g}")
        return _Resolved(None, KeyringStatus(False, "unknown", reason))


def keyring_status(timeout: float = DETECT_TIMEOUT) -> KeyringStatus:
    """Whether the system keyring can keep sign-ins; never blocks longer than `timeout`."""
    return _resolve(timeout).status


def _keyring_failure(error: Exception, doing: str) -> TokenStoreError:
    """A keyring backend's exception as a TokenStoreError in plain words.

    `doing` is one of the N_ infinitives above (`_READ`…).
    """
    errors = keyring.errors
    names = {"doing": _(doing), "error": error}
    if isinstance(error, errors.NoKeyringError):
        return NoKeyringError(_why_no_backend())
    if isinstance(error, errors.KeyringLocked):
        text = _(
            "the system keyring is locked and was not unlocked, so talkie could not {doing} "
            "(was the unlock prompt dismissed?)"
        )
        return TokenStoreError(text.format(**names))
    if isinstance(error, errors.InitError):
        if "prompt dismissed" in str(error).lower():
            text = _(
                "the system keyring could not be opened to {doing}: it needs an unlock or "
                "set-up prompt, and none could be shown or it was dismissed (without a desktop, "
                "start gnome-keyring-daemon with --unlock)"
            )
            return TokenStoreError(text.format(**names))
        text = _("the system keyring could not be opened to {doing} ({error})")
        return TokenStoreError(text.format(**names))
    if isinstance(error, errors.PasswordSetError):
        return TokenStoreError(_("the system keyring refused to {doing} ({error})").format(**names))
    if getattr(error, "winerror", None) == 1783:
        # CredWrite's "The stub received bad data": the entry is over the size limit.
        text = _("Windows' Credential Manager refused to {doing}: it is too large")
        return TokenStoreError(text.format(**names))
    if isinstance(error, errors.KeyringError | OSError):
        return TokenStoreError(_("the system keyring could not {doing} ({error})").format(**names))
    # Backends are plugins (secretstorage, jeepney, pywin32...) with their own exceptions.
    text = _("the system keyring could not {doing} ({type}: {error})")
    return TokenStoreError(text.format(type=type(error).__name__, **names))


class KeyringStore:
    """Grants in the system keyring: service "talkie", one entry per server id.

    Refuses (NoKeyringError) backends that do not protect secrets, even when handed one.
    Each call waits at most `timeout` seconds (an unlock prompt may be showing meanwhile).
    """

    kind = "keyring"

    def __init__(
        self, backend: KeyringBackend | None = None, *, timeout: float = KEYRING_TIMEOUT
    ) -> None:
        self.timeout = timeout
        self._given = backend
        self._checked: KeyringBackend | None = None

    @classmethod
    def _of_checked(cls, backend: KeyringBackend) -> KeyringStore:
        store = cls(backend)
        store._checked = backend
        return store

    def describe(self) -> str:
        """Where the grants are, in words for the user."""
        backend = self._checked or self._given
        if backend is None:
            return _("the system keyring")
        return _("the system keyring ({backend})").format(backend=_backend_name(backend))

    def load(self, server_id: str) -> StoredGrant | None:
        """The grant kept for `server_id`, or None (also for an unusable entry)."""
        text = self._call(lambda backend: backend.get_password(KEYRING_SERVICE, server_id), _READ)
        return None if text is None else StoredGrant.from_json(text)

    def save(self, server_id: str, grant: StoredGrant) -> None:
        """Keep `grant` for `server_id`; TokenStoreError (GrantTooLarge too) when it cannot."""
        _check_server_id(server_id)
        text = grant.to_json()
        self._call(
            lambda backend: backend.set_password(KEYRING_SERVICE, server_id, text),
            _STORE,
        )

    def delete(self, server_id: str) -> None:
        """Remove the grant of `server_id`, if any."""
        self.discard(server_id)

    def discard(self, server_id: str) -> bool:
        """Remove the entry of `server_id` (even an unusable one); True when there was one."""

        def remove(backend: KeyringBackend) -> bool:
            # Read first: backends report "absent" and "failed" with the same PasswordDeleteError.
            if backend.get_password(KEYRING_SERVICE, server_id) is None:
                return False
            backend.delete_password(KEYRING_SERVICE, server_id)
            return True

        return self._call(remove, _DELETE)

    def _backend(self) -> KeyringBackend:
        if self._checked is not None:
            return self._checked
        if self._given is None:
            resolved = _resolve(min(self.timeout, DETECT_TIMEOUT))
            if resolved.backend is None:
                raise NoKeyringError(resolved.status.reason)
            self._checked = resolved.backend
        else:
            given = self._given
            try:
                reason = _Call(lambda: _unusable_reason(given), "talkie-keyring-check").wait(
                    min(self.timeout, DETECT_TIMEOUT)
                )
            except _TimedOut:
                reason = _("the system keyring did not answer")
            if reason is not None:
                raise NoKeyringError(reason)
            self._checked = given
        return self._checked

    def _call(self, operation: Callable[[KeyringBackend], _T], doing: str) -> _T:
        backend = self._backend()
        try:
            return _Call(lambda: operation(backend), "talkie-keyring").wait(self.timeout)
        except _TimedOut:
            text = _(
                "the system keyring did not answer within {seconds} seconds, so talkie "
                "could not {doing} (is an unlock prompt waiting?)"
            )
            raise TokenStoreError(
                text.format(seconds=f"{self.timeout:g}", doing=_(doing))
            ) from None
        except Exception as error:
            raise _keyring_failure(error, doing) from error


# --- choosing a store ------------------------------------------------------------------------


def open_store(kind: str) -> TokenStore:
    """The store `Settings.token_storage` names; NoKeyringError(reason) when the keyring is out."""
    if kind == "keyring":
        resolved = _resolve(DETECT_TIMEOUT)
        if resolved.backend is None:
            raise NoKeyringError(resolved.status.reason)
        return KeyringStore._of_checked(resolved.backend)
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
    resolved = _resolve(DETECT_TIMEOUT)
    if resolved.backend is not None:
        stores.append(KeyringStore._of_checked(resolved.backend))
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
