"""Where sign-in tokens are kept: the grant format, the three stores, keyring detection."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import keyring
import keyring.core
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null
from keyring.errors import (
    InitError,
    KeyringError,
    KeyringLocked,
    PasswordSetError,
)
from keyring.errors import (
    NoKeyringError as KeyringNoKeyringError,
)

from talkie_tui.auth import keyring_store, store
from talkie_tui.auth.grants import MAX_GRANT_CHARS, GrantTooLarge
from talkie_tui.auth.keyring_store import KEYRING_SERVICE
from talkie_tui.auth.store import (
    FileStore,
    ForgetIncomplete,
    KeyringStore,
    MemoryStore,
    NoKeyringError,
    StoredGrant,
    TokenStore,
    TokenStoreError,
    forget_everywhere,
    keyring_status,
    open_store,
)
from talkie_tui.config import DEFAULT_CLIENT_ID, config_dir
from tests.auth.memory_keyring import (  # the fixtures are used by name
    InstallKeyring,
    MemoryKeyring,
    install_keyring,
    memory_keyring,
)

__all__ = ["install_keyring", "memory_keyring"]

SERVER = "srv_01J9Z6W3K4crm.example.com"
OTHER = "srv_other"
ISSUER = "https://auth.crm.example.com/realms/talkie-production"
SCOPE = "talkie offline_access openid profile email"


def grant(token: str = "rt-" + "a" * 40, scope: str = SCOPE) -> StoredGrant:
    return StoredGrant(token, ISSUER, DEFAULT_CLIENT_ID, scope)


@pytest.fixture(autouse=True)
def _no_session_grants() -> Iterator[None]:
    """Session grants live in a process-wide dict: each test starts and ends without any."""
    store._SESSION_GRANTS.clear()
    yield
    store._SESSION_GRANTS.clear()


# --- keyring backends that are not the system's ---------------------------------------------


class PlaintextKeyring(MemoryKeyring):
    """Looks like keyrings.alt's PlaintextKeyring (which is not a dependency)."""

    __module__ = "keyrings.alt.file"
    priority = 0.5


class EncryptedKeyring(MemoryKeyring):
    """Looks like keyrings.alt's EncryptedKeyring (asks for a master password on stdin)."""

    __module__ = "keyrings.alt.file"
    priority = 0.6


class LowKeyring(MemoryKeyring):
    """A backend keyring itself does not recommend (priority below 1)."""

    priority = 0.2


class RaisingKeyring(MemoryKeyring):
    """Every read and write raises `error`."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def get_password(self, service: str, username: str) -> str | None:
        raise self.error

    def set_password(self, service: str, username: str, password: str) -> None:
        raise self.error


class BlockingKeyring(MemoryKeyring):
    """Every read and write waits until `release` is set, like a D-Bus call nobody answers."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.answered = 0  # calls that got past the wait

    def get_password(self, service: str, username: str) -> str | None:
        self.release.wait(10)
        self.answered += 1
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        self.release.wait(10)
        self.answered += 1
        super().set_password(service, username, password)


# --- the grant -------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [43, 86, 200])
def test_a_realistic_grant_is_compact_json_well_under_the_keyring_limit(length: int) -> None:
    original = grant("x" * length)
    text = original.to_json()
    assert len(text) < MAX_GRANT_CHARS
    assert " " not in text.replace(SCOPE, "")  # compact separators
    assert json.loads(text) == {
        "v": 1,
        "refresh_token": "x" * length,
        "issuer": ISSUER,
        "client_id": DEFAULT_CLIENT_ID,
        "scope": SCOPE,
    }
    assert StoredGrant.from_json(text) == original


def test_a_huge_grant_is_refused_before_any_store_sees_it() -> None:
    with pytest.raises(GrantTooLarge) as caught:
        grant("x" * 2000).to_json()
    assert caught.value.size > MAX_GRANT_CHARS
    # A ValueError (as promised) and a TokenStoreError (what callers catch around save).
    assert isinstance(caught.value, ValueError)
    assert "1000" in caught.value.message


def test_non_ascii_counts_as_its_escaped_length() -> None:
    # Escaped, so the limit holds in UTF-16 (Windows) as in UTF-8.
    text = grant(scope="é" * 10).to_json()
    assert text.isascii()
    assert StoredGrant.from_json(text) == grant(scope="é" * 10)


def test_the_refresh_token_stays_out_of_repr() -> None:
    assert "rt-aaaa" not in repr(grant())
    assert ISSUER in repr(grant())


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "null",
        "[]",
        "{}",
        '"a string"',
        '{"refresh_token": "r", "issuer": "i"}',
        '{"refresh_token": "", "issuer": "i", "client_id": "c"}',
        '{"refresh_token": 5, "issuer": "i", "client_id": "c"}',
        '{"refresh_token": "r", "issuer": "i", "client_id": "c", "scope": ["talkie"]}',
        '{"v": 2, "refresh_token": "r", "issuer": "i", "client_id": "c"}',
        "[" * 100_000,
    ],
)
def test_unusable_content_reads_as_no_grant(text: str) -> None:
    assert StoredGrant.from_json(text) is None


def test_a_grant_without_version_or_scope_is_still_read() -> None:
    text = '{"refresh_token": "r", "issuer": "i", "client_id": "c", "extra": 1}'
    assert StoredGrant.from_json(text) == StoredGrant("r", "i", "c", "")


# --- the three stores ------------------------------------------------------------------------


@pytest.fixture(params=["keyring", "file", "session"])
def any_store(request: pytest.FixtureRequest, memory_keyring: MemoryKeyring) -> TokenStore:
    return open_store(request.param)


def test_every_store_keeps_a_grant_per_server(any_store: TokenStore) -> None:
    assert any_store.load(SERVER) is None
    any_store.save(SERVER, grant("first"))
    any_store.save(OTHER, grant("other"))
    assert any_store.load(SERVER) == grant("first")
    any_store.save(SERVER, grant("second"))
    assert any_store.load(SERVER) == grant("second")
    assert any_store.load(OTHER) == grant("other")
    any_store.delete(SERVER)
    assert any_store.load(SERVER) is None
    any_store.delete(SERVER)  # absent: no error
    assert any_store.load(OTHER) == grant("other")


def test_a_new_store_object_sees_what_an_earlier_one_kept(any_store: TokenStore) -> None:
    any_store.save(SERVER, grant())
    assert open_store(any_store.kind).load(SERVER) == grant()


def test_every_store_says_where_it_keeps_grants(any_store: TokenStore) -> None:
    words = {
        "keyring": "the system keyring (memory keyring MemoryKeyring)",
        "file": f"the file {config_dir() / 'tokens.json'} (readable only by you)",
        "session": "memory only (signed out when talkie exits)",
    }
    assert any_store.describe() == words[any_store.kind]


def test_an_empty_server_id_is_a_mistake(any_store: TokenStore) -> None:
    with pytest.raises(ValueError):
        any_store.save("", grant())


def test_session_grants_are_shared_by_the_whole_process() -> None:
    MemoryStore().save(SERVER, grant())
    assert MemoryStore().load(SERVER) == grant()
    MemoryStore().delete(SERVER)
    assert MemoryStore().load(SERVER) is None


# --- the file --------------------------------------------------------------------------------


def test_the_file_is_readable_only_by_the_user(talkie_home: Path) -> None:
    files = FileStore()
    assert files.path == talkie_home / "tokens.json"
    files.save(SERVER, grant())
    assert stat.S_IMODE(files.path.stat().st_mode) == 0o600
    assert json.loads(files.path.read_text()) == {
        "version": 1,
        "grants": {SERVER: grant().to_dict()},
    }


def test_the_folder_talkie_creates_for_the_file_is_private(tmp_path: Path) -> None:
    files = FileStore(tmp_path / "new" / "tokens.json")
    files.save(SERVER, grant())
    assert stat.S_IMODE(files.path.parent.stat().st_mode) == 0o700


def test_each_save_replaces_the_file_whole(tmp_path: Path) -> None:
    files = FileStore(tmp_path / "tokens.json")
    files.save(SERVER, grant("first"))
    before = files.path.stat().st_ino
    files.save(SERVER, grant("second"))
    # A new inode: the file was swapped in (os.replace), never rewritten in place.
    assert files.path.stat().st_ino != before


def test_a_failed_write_leaves_the_previous_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = FileStore(tmp_path / "tokens.json")
    files.save(SERVER, grant("first"))

    def crash(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(TokenStoreError, match="could not be written \\(No space left on device\\)"):
        files.save(SERVER, grant("second"))
    monkeypatch.undo()
    assert FileStore(files.path).load(SERVER) == grant("first")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokens.json"]  # no temp file left


def test_a_file_others_can_read_is_made_private_with_a_warning(tmp_path: Path) -> None:
    FileStore(tmp_path / "tokens.json").save(SERVER, grant())
    path = tmp_path / "tokens.json"
    path.chmod(0o644)
    files = FileStore(path)
    assert files.load(SERVER) == grant()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert files.warnings == [
        f"{path} could be read by other users; it is now readable only by you. "
        "If someone may have copied it, sign out and sign in again."
    ]


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"version": 1}',
        '{"version": 9, "grants": {}}',
        b"\xff\xfe garbage",
    ],
)
def test_a_corrupt_file_reads_as_no_grants_and_is_replaced_on_save(
    tmp_path: Path, content: str | bytes
) -> None:
    path = tmp_path / "tokens.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    path.chmod(0o600)
    files = FileStore(path)
    assert files.load(SERVER) is None
    assert files.warnings and str(path) in files.warnings[0]
    files.save(SERVER, grant())
    assert FileStore(path).load(SERVER) == grant()


def test_one_corrupt_entry_does_not_cost_the_others(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    document = {"version": 1, "grants": {SERVER: {"refresh_token": 5}, OTHER: grant().to_dict()}}
    path.write_text(json.dumps(document))
    path.chmod(0o600)
    files = FileStore(path)
    assert files.load(SERVER) is None
    assert files.load(OTHER) == grant()
    files.save("third", grant("third"))  # an entry this version cannot use is kept as it is
    assert json.loads(path.read_text())["grants"][SERVER] == {"refresh_token": 5}


def test_a_symlinked_file_is_ignored_and_replaced_by_a_real_one(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"version": 1, "grants": {SERVER: grant().to_dict()}}))
    path = tmp_path / "tokens.json"
    path.symlink_to(target)
    files = FileStore(path)
    assert files.load(SERVER) is None
    assert "symbolic link" in files.warnings[0]
    files.save(OTHER, grant())
    assert not path.is_symlink()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_folder_in_place_of_the_file_is_ignored_and_saving_fails_plainly(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.json"
    path.mkdir()
    (path / "x").touch()
    files = FileStore(path)
    assert files.load(SERVER) is None
    assert "not a regular file" in files.warnings[0]
    with pytest.raises(TokenStoreError, match="could not be written \\(Is a directory\\)"):
        files.save(SERVER, grant())


def test_a_fifo_in_place_of_the_file_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    os.mkfifo(path)
    files = FileStore(path)
    assert files.load(SERVER) is None
    assert "not a regular file" in files.warnings[0]


def test_a_file_that_cannot_be_opened_is_an_error_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{}")

    def denied(*args: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)  # root may read anything: a chmod would not do
    with pytest.raises(TokenStoreError, match="could not be read \\(Permission denied\\)"):
        FileStore(path).load(SERVER)


def test_deleting_the_last_grant_removes_the_file(tmp_path: Path) -> None:
    files = FileStore(tmp_path / "tokens.json")
    files.save(SERVER, grant())
    files.save(OTHER, grant())
    files.delete(SERVER)
    assert files.path.exists()
    files.delete(OTHER)
    assert not files.path.exists()


# --- the keyring store -----------------------------------------------------------------------


def test_the_keyring_holds_one_entry_per_server_under_talkie(memory_keyring: MemoryKeyring) -> None:
    keyring_store = open_store("keyring")
    keyring_store.save(SERVER, grant())
    assert memory_keyring.entries == {(KEYRING_SERVICE, SERVER): grant().to_json()}


@pytest.mark.parametrize("text", ["{not json", '{"refresh_token": null}', "[]", ""])
def test_a_corrupt_keyring_entry_reads_as_no_grant(
    memory_keyring: MemoryKeyring, text: str
) -> None:
    memory_keyring.entries[(KEYRING_SERVICE, SERVER)] = text
    assert open_store("keyring").load(SERVER) is None


def test_a_huge_grant_is_not_written_to_the_keyring(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(GrantTooLarge):
        open_store("keyring").save(SERVER, grant("x" * 2000))
    assert memory_keyring.entries == {}


def test_a_keyring_store_made_directly_uses_the_detected_backend(
    memory_keyring: MemoryKeyring,
) -> None:
    keyring_store = KeyringStore()
    assert keyring_store.describe() == "the system keyring"  # not known before first use
    keyring_store.save(SERVER, grant())
    assert memory_keyring.entries
    assert keyring_store.describe() == "the system keyring (memory keyring MemoryKeyring)"


@pytest.mark.parametrize("made_with_backend", [False, True])
def test_a_keyring_store_never_writes_to_a_plaintext_backend(
    install_keyring: InstallKeyring, made_with_backend: bool
) -> None:
    plaintext = PlaintextKeyring()
    install_keyring(plaintext)
    keyring_store = KeyringStore(plaintext) if made_with_backend else KeyringStore()
    with pytest.raises(NoKeyringError, match="unencrypted"):
        keyring_store.save(SERVER, grant())
    assert plaintext.entries == {}


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (KeyringLocked("Failed to unlock the collection!"), "locked and was not unlocked"),
        (
            InitError("Failed to create the collection: Prompt dismissed.."),
            "none could be shown or it was dismissed",
        ),
        (InitError("Failed to create the collection: boom."), "could not be opened"),
        (PasswordSetError("denied"), "refused to store the sign-in (denied)"),
        (KeyringError("odd"), "could not store the sign-in (odd)"),
        (ConnectionResetError(104, "Connection reset by peer"), "Connection reset by peer"),
        (RuntimeError("jeepney said no"), "(RuntimeError: jeepney said no)"),
    ],
)
def test_keyring_failures_become_plain_errors(
    install_keyring: InstallKeyring, error: Exception, words: str
) -> None:
    install_keyring(RaisingKeyring(error))
    keyring_store = open_store("keyring")
    with pytest.raises(TokenStoreError) as caught:
        keyring_store.save(SERVER, grant())
    assert words in caught.value.message
    assert caught.value.message.startswith(("the system keyring", "Windows"))
    with pytest.raises(TokenStoreError):
        keyring_store.load(SERVER)


def test_a_no_keyring_error_at_use_becomes_our_no_keyring_error(
    install_keyring: InstallKeyring,
) -> None:
    install_keyring(RaisingKeyring(KeyringNoKeyringError("No recommended backend")))
    with pytest.raises(NoKeyringError):
        open_store("keyring").load(SERVER)


def test_a_keyring_call_that_never_answers_is_given_up(install_keyring: InstallKeyring) -> None:
    blocking = BlockingKeyring()
    install_keyring(blocking)
    keyring_store = KeyringStore(blocking, timeout=0.2)
    try:
        with pytest.raises(TokenStoreError, match=r"did not answer within 0\.2 seconds"):
            keyring_store.load(SERVER)
        # Given up while the keyring call was still waiting, not after it answered.
        assert blocking.answered == 0
    finally:
        blocking.release.set()


# --- keyring detection -----------------------------------------------------------------------


def test_the_memory_backend_is_a_usable_keyring(memory_keyring: MemoryKeyring) -> None:
    assert keyring_status() == store.KeyringStatus(True, "memory keyring MemoryKeyring", "")


def test_no_dbus_is_explained(
    install_keyring: InstallKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    install_keyring(fail.Keyring())
    status = keyring_status()
    assert not status.available
    assert status.backend == "fail Keyring"
    assert status.reason == (
        "no Secret Service is running (DBUS_SESSION_BUS_ADDRESS is unset): "
        "common over SSH and in containers"
    )


def test_a_dbus_without_secret_service_is_explained(
    install_keyring: InstallKeyring, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus'}")
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    install_keyring(fail.Keyring())
    reason = keyring_status().reason
    assert reason.startswith("no Secret Service answered on D-Bus (")


def test_a_forced_fail_backend_is_explained(
    install_keyring: InstallKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    install_keyring(fail.Keyring())
    assert keyring_status().reason == (
        "PYTHON_KEYRING_BACKEND selects keyring.backends.fail.Keyring, which cannot keep secrets"
    )


@pytest.mark.parametrize(
    ("backend", "words"),
    [
        (null.Keyring(), "keyring is switched off"),
        (PlaintextKeyring(), "file PlaintextKeyring (keyrings.alt.file.PlaintextKeyring)"),
        (EncryptedKeyring(), "asks for its master password on the terminal"),
        (LowKeyring(), "not one keyring recommends (priority 0.2)"),
    ],
)
def test_backends_that_do_not_protect_secrets_are_no_keyring(
    install_keyring: InstallKeyring, backend: KeyringBackend, words: str
) -> None:
    install_keyring(backend)
    status = keyring_status()
    assert not status.available
    assert words in status.reason
    with pytest.raises(NoKeyringError) as caught:
        open_store("keyring")
    assert caught.value.reason == status.reason
    assert caught.value.message == f"there is no usable system keyring: {status.reason}"


def test_a_chainer_is_judged_by_the_backend_it_writes_to(
    install_keyring: InstallKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, plaintext = MemoryKeyring(), PlaintextKeyring()
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [memory, plaintext])
    install_keyring(chainer.ChainerBackend())
    assert keyring_status().available
    # Only the secure backend is read: a token in the plaintext file is never picked up.
    plaintext.entries[(KEYRING_SERVICE, SERVER)] = grant().to_json()
    keyring_store = open_store("keyring")
    assert keyring_store.load(SERVER) is None
    keyring_store.save(SERVER, grant("secure"))
    assert memory.entries[(KEYRING_SERVICE, SERVER)] == grant("secure").to_json()


def test_a_chainer_of_insecure_backends_is_no_keyring(
    install_keyring: InstallKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        chainer.ChainerBackend, "backends", [EncryptedKeyring(), PlaintextKeyring()]
    )
    install_keyring(chainer.ChainerBackend())
    assert "master password" in keyring_status().reason


def test_a_backend_named_by_the_environment_that_cannot_load_is_explained(
    install_keyring: InstallKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)  # detect again
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.missing.Keyring")
    status = keyring_status()
    assert not status.available
    assert status.reason.startswith(
        "PYTHON_KEYRING_BACKEND selects keyrings.missing.Keyring, which cannot be used here ("
    )


def test_detection_that_hangs_is_bounded(
    install_keyring: InstallKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    detected = threading.Event()
    calls = 0

    def hang() -> KeyringBackend:
        nonlocal calls
        calls += 1
        release.wait(10)
        detected.set()
        return MemoryKeyring()

    monkeypatch.setattr(keyring, "get_keyring", hang)
    try:
        first = keyring_status(timeout=0.2)
        second = keyring_status(timeout=0.2)  # waits on the same detection, starts no other
        with pytest.raises(NoKeyringError, match="did not answer within"):
            store.KeyringStore(timeout=0.2).load(SERVER)
        # All three answered while the one detection was still hanging.
        assert not detected.is_set()
        assert calls == 1
    finally:
        release.set()
    assert first == second
    assert not first.available
    assert first.reason == (
        "the system keyring did not answer within 0.2 seconds "
        "(D-Bus or the Secret Service is not responding)"
    )
    detection = keyring_store._detecting
    assert detection is not None
    assert detection.wait(5).status.available  # and the stuck detection ends once answered


@pytest.fixture
def silent_dbus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """A D-Bus address whose socket takes connections and never says a word."""
    path = tmp_path / "bus"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)
    listener.setblocking(False)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={path}")

    def hang_up() -> int:
        """Close the connections made so far (their readers get an end of file); how many."""
        count = 0
        while True:
            try:
                connection, _ = listener.accept()
            except BlockingIOError:
                return count
            connection.close()
            count += 1

    yield hang_up
    hang_up()
    listener.close()


def test_a_secret_service_that_never_answers_does_not_hang_talkie(
    install_keyring: InstallKeyring,
    monkeypatch: pytest.MonkeyPatch,
    silent_dbus: Callable[[], int],
) -> None:
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)  # detect for real, over D-Bus
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.SecretService.Keyring")
    status = keyring_status(timeout=0.3)
    # Talkie's own bound gave up (the reason names it), not D-Bus: the bus never answers.
    assert not status.available
    assert "did not answer within 0.3 seconds" in status.reason
    # Hang up, so the stuck detection ends (Secret Service not viable) before the test does.
    assert silent_dbus() >= 1  # detection did reach the silent bus
    detection = keyring_store._detecting
    assert detection is not None
    late = detection.wait(10)
    assert not late.status.available


def test_open_store_knows_three_kinds(memory_keyring: MemoryKeyring) -> None:
    assert isinstance(open_store("keyring"), KeyringStore)
    assert isinstance(open_store("file"), FileStore)
    assert isinstance(open_store("session"), MemoryStore)
    with pytest.raises(ValueError, match="unknown token storage"):
        open_store("plaintext")


# --- forgetting ------------------------------------------------------------------------------


def test_forget_everywhere_removes_the_grant_from_every_store(
    memory_keyring: MemoryKeyring,
) -> None:
    for kind in ("keyring", "file", "session"):
        open_store(kind).save(SERVER, grant())
        open_store(kind).save(OTHER, grant())
    removed = forget_everywhere(SERVER)
    assert removed == [
        "memory only (signed out when talkie exits)",
        f"the file {config_dir() / 'tokens.json'} (readable only by you)",
        "the system keyring (memory keyring MemoryKeyring)",
    ]
    for kind in ("keyring", "file", "session"):
        assert open_store(kind).load(SERVER) is None
        assert open_store(kind).load(OTHER) == grant()
    assert forget_everywhere(SERVER) == []


def test_forget_everywhere_removes_unusable_entries_too(memory_keyring: MemoryKeyring) -> None:
    memory_keyring.entries[(KEYRING_SERVICE, SERVER)] = "{corrupt"
    assert forget_everywhere(SERVER) == ["the system keyring (memory keyring MemoryKeyring)"]
    assert memory_keyring.entries == {}


def test_forget_everywhere_without_a_keyring_still_clears_the_rest(
    install_keyring: InstallKeyring,
) -> None:
    install_keyring(fail.Keyring())
    open_store("file").save(SERVER, grant())
    open_store("session").save(SERVER, grant())
    assert len(forget_everywhere(SERVER)) == 2


def test_forget_everywhere_reports_a_store_it_could_not_clear(
    install_keyring: InstallKeyring,
) -> None:
    install_keyring(RaisingKeyring(KeyringLocked("Failed to unlock the collection!")))
    open_store("session").save(SERVER, grant())
    with pytest.raises(ForgetIncomplete) as caught:
        forget_everywhere(SERVER)
    assert caught.value.removed == ["memory only (signed out when talkie exits)"]
    assert caught.value.failures[0].startswith("the system keyring (test store RaisingKeyring): ")
    assert MemoryStore().load(SERVER) is None
