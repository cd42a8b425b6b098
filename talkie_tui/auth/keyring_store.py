"""Sign-ins kept in the system keyring: `KeyringStore`, and whether the keyring may keep them.

The keyring is used only when it really protects secrets. keyring falls back to backends that
do not (`fail`, `null`, or keyrings.alt's plaintext file, which merely installing keyrings.alt
makes the default on a headless machine), so `keyring_status` treats those as "no keyring" and
`open_keyring_store` raises `NoKeyringError` with the reason: the user then chooses the 0600
file or this session only. Nothing falls back to plaintext on its own.

Keyring calls may block (D-Bus without an answer, an unlock prompt nobody sees): every one runs
on a daemon thread and is given up after a timeout.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from talkie_tui.auth.grants import NoKeyringError, StoredGrant, TokenStoreError, check_server_id
from talkie_tui.i18n import N_, _

# keyring is imported where it is first used: importing it loads every backend it knows
# (D-Bus, macOS, Windows…), which a start that never touches a sign-in does not need.
if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = [
    "DETECT_TIMEOUT",
    "KEYRING_SERVICE",
    "KEYRING_TIMEOUT",
    "KeyringStatus",
    "KeyringStore",
    "keyring_status",
    "open_keyring_store",
]

KEYRING_SERVICE = "talkie"
DETECT_TIMEOUT = 5.0
"""Seconds to wait for keyring to find its backend (it asks D-Bus on Linux)."""
KEYRING_TIMEOUT = 60.0
"""Seconds to wait for one keyring read or write; long enough to answer an unlock prompt."""

_T = TypeVar("_T")
# What a keyring call was doing, as an infinitive that fits "talkie could not …" (N_: each
# message translates it where it is used).
_READ = N_("read the sign-in")
_STORE = N_("store the sign-in")
_DELETE = N_("delete the sign-in")
_NO_BACKEND = N_("keyring found no backend that can keep secrets on this system")


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
    from keyring.backends import fail, null

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
    import keyring
    from keyring.backends import chainer

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
    import keyring.errors as errors

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
        check_server_id(server_id)
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


def open_keyring_store() -> KeyringStore:
    """A store on the detected keyring; NoKeyringError(reason) when it cannot keep sign-ins."""
    resolved = _resolve(DETECT_TIMEOUT)
    if resolved.backend is None:
        raise NoKeyringError(resolved.status.reason)
    return KeyringStore._of_checked(resolved.backend)
