"""Sign-ins kept in a private file: `FileStore`, tokens.json (0600) in the config folder."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from talkie_tui.auth.grants import StoredGrant, TokenStoreError, check_server_id
from talkie_tui.config import config_dir, write_private_file
from talkie_tui.i18n import _

__all__ = ["TOKENS_FILE", "FileStore"]

TOKENS_FILE = "tokens.json"
_FILE_VERSION = 1


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
        check_server_id(server_id)
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
