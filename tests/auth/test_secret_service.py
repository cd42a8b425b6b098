"""The keyring store against a real Secret Service: gnome-keyring under dbus-run-session.

Each step runs in its own process (tests/auth/secret_service_probe.py), so a grant read back
by a later step can only have come through the service.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from talkie_tui.auth.keyring_store import KEYRING_SERVICE
from talkie_tui.auth.store import StoredGrant
from talkie_tui.config import DEFAULT_CLIENT_ID

pytestmark = pytest.mark.keyring

PROBE = Path(__file__).with_name("secret_service_probe.py")
REPO = Path(__file__).resolve().parents[2]
SESSION_TIMEOUT = 60.0
SERVER = "srv_secret_service_test"
GRANT = StoredGrant(
    "rt-" + "k" * 80,
    "https://auth.crm.example.com/realms/talkie",
    DEFAULT_CLIENT_ID,
    "talkie offline_access",
)


def run_in_session(
    tmp_path: Path, steps: list[list[str]], *, unlock: bool = True
) -> list[dict[str, Any]]:
    """Run probe `steps` in one D-Bus session with gnome-keyring; their JSON lines, in order."""
    missing = [
        tool for tool in ("dbus-run-session", "gnome-keyring-daemon") if not shutil.which(tool)
    ]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} missing: install gnome-keyring and dbus-daemon (make test does)"
        )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND")
        and not key.startswith("KEYRING_PROPERTY_")
    }
    # A fresh home: the keyring files, the daemon's sockets and keyring's config stay in tmp_path.
    for name, folder in [
        ("HOME", "home"),
        ("XDG_RUNTIME_DIR", "run"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
        ("TALKIE_HOME", "talkie"),
    ]:
        path = tmp_path / folder
        path.mkdir(mode=0o700)
        env[name] = str(path)
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.SecretService.Keyring"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    python = f"{shlex.quote(sys.executable)} {shlex.quote(str(PROBE))}"
    commands = "; ".join(f"{python} {shlex.join(step)}" for step in steps)
    # Without --unlock, a fresh home has no login keyring and creating one needs a prompt that
    # cannot be shown: "Prompt dismissed" (notes/oauth.md §5). The test without it wants that.
    daemon = (
        "printf %s talkie-test-password | gnome-keyring-daemon --unlock --components=secrets"
        if unlock
        else "gnome-keyring-daemon --start --components=secrets"
    )
    process = subprocess.Popen(
        ["dbus-run-session", "--", "sh", "-c", f"{daemon} >/dev/null && {{ {commands}; }}"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # one process group: a timeout ends the daemons too
    )
    try:
        stdout, stderr = process.communicate(timeout=SESSION_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"the D-Bus session took over {SESSION_TIMEOUT:g} s:\n{stdout}\n{stderr}")
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    assert [line["op"] for line in lines] == [step[0] for step in steps], (
        f"exit {process.returncode}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    )
    return lines


def test_a_grant_kept_by_one_process_is_read_by_another_through_the_secret_service(
    tmp_path: Path,
) -> None:
    status, auto, saved, raw, loaded, deleted, gone, raw_after = run_in_session(
        tmp_path,
        [
            ["status"],
            ["status-auto"],
            ["save", SERVER, GRANT.to_json()],
            ["raw", SERVER],
            ["load", SERVER],
            ["delete", SERVER],
            ["load", SERVER],
            ["raw", SERVER],
        ],
    )
    assert status == {
        "op": "status",
        "available": True,
        "backend": "SecretService Keyring",
        "reason": "",
    }
    # Without PYTHON_KEYRING_BACKEND, keyring finds the Secret Service by itself.
    assert auto["available"] is True
    assert auto["backend"] == "SecretService Keyring"
    assert saved == {"op": "save", "saved": "the system keyring (SecretService Keyring)"}
    # The service itself holds one item: service "talkie", the server id, the compact grant.
    [item] = raw["items"]
    assert item["attributes"]["service"] == KEYRING_SERVICE
    assert item["attributes"]["username"] == SERVER
    assert item["secret"] == GRANT.to_json()
    assert loaded == {"op": "load", "grant": GRANT.to_dict()}
    assert deleted == {"op": "delete", "deleted": True}
    assert gone == {"op": "load", "grant": None}
    assert raw_after == {"op": "raw", "items": []}


def test_a_keyring_that_needs_a_prompt_fails_in_plain_words(tmp_path: Path) -> None:
    status, saved = run_in_session(
        tmp_path, [["status"], ["save", SERVER, GRANT.to_json()]], unlock=False
    )
    # The service answers, so the keyring looks usable; only a write shows it needs a prompt.
    assert status["available"] is True
    assert saved["error"] == "TokenStoreError"
    assert saved["message"] == (
        "the system keyring could not be opened to store the sign-in: it needs an unlock or "
        "set-up prompt, and none could be shown or it was dismissed (without a desktop, "
        "start gnome-keyring-daemon with --unlock)"
    )
