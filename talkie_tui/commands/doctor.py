"""`talkie doctor`: what talkie finds on this machine, in plain words (always exits 0).

It checks files and settings, the keyring, the browser sign-in would use, PortAudio and the
audio devices, the proxies and certificates in effect, and whether each known server answers.
A machine without a keyring, audio or a browser is a normal case here: the report says what
is missing and what talkie does instead.
"""

from __future__ import annotations

import asyncio
import platform
import shutil
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import httpx

from talkie_tui import __version__
from talkie_tui.config import (
    KnownServer,
    KnownServers,
    Settings,
    config_dir,
    data_dir,
    settings_path,
    state_dir,
)
from talkie_tui.core.errors import TalkieError
from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text
from talkie_tui.core.waiting import wait_within
from talkie_tui.i18n import LANGUAGES, system_language
from talkie_tui.logs import log_folder
from talkie_tui.protocol.net.http import (
    ProxySettings,
    TrustStore,
    make_http_client,
    proxy_settings,
    trust_store,
)
from talkie_tui.protocol.talkie.manifest import fetch_manifest, manifest_url_for

__all__ = ["doctor"]

OK, BAD, INFO = "✓", "✗", "–"
# Short: a report should not hang on one dead server. Servers are checked concurrently.
SERVER_TIMEOUT = 5.0
KEYRING_TIMEOUT = 3.0
_VOICE_OFF = "Voice calls are off; chat works as usual."


@dataclass
class _Section:
    title: str
    rows: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, mark: str, label: str, text: str) -> None:
        self.rows.append((mark, label, text))


# --- files and settings ------------------------------------------------------------------------


def _folder_row(section: _Section, label: str, path: Path) -> None:
    if path.is_dir():
        section.add(OK, label, str(path))
    elif path.exists():
        section.add(BAD, label, f"{path} is not a folder")
    else:
        section.add(INFO, label, f"{path} (not created yet; talkie creates it when needed)")


def _files(settings_file: Path) -> tuple[_Section, Settings]:
    section = _Section("Files")
    _folder_row(section, "config folder", config_dir())
    _folder_row(section, "data folder", data_dir())
    _folder_row(section, "state folder", state_dir())
    settings = Settings.load(settings_file)
    if not settings_file.exists():
        section.add(INFO, "settings", f"{settings_file} not found: the defaults are used")
    elif settings.warnings:
        count = len(settings.warnings)
        section.add(BAD, "settings", f"{settings_file}: {count} problem{'s' * (count > 1)}")
        for warning in settings.warnings:
            # Settings prefix each warning with the file's path, already shown above.
            section.add("", "", f"- {warning.removeprefix(f'{settings_file}: ')}")
    else:
        section.add(OK, "settings", f"{settings_file} read")
    logs = sorted(log_folder().glob("talkie-*.log")) if log_folder().is_dir() else []
    if logs:
        section.add(INFO, "debug logs", f"{len(logs)} in {log_folder()}, newest {logs[-1].name}")
    else:
        section.add(INFO, "debug logs", f"none (`talkie --debug …` writes one to {log_folder()})")
    crashes = sorted(log_folder().glob("crash-*.log")) if log_folder().is_dir() else []
    if crashes:
        section.add(
            INFO, "crash reports", f"{len(crashes)}, newest {crashes[-1]} (attach it to a report)"
        )
    section.add(INFO, "language", _language_row(settings.language))
    return section, settings


def _language_row(setting: str) -> str:
    """Which language the UI will speak, and why."""
    if setting in LANGUAGES:
        return f'{LANGUAGES[setting]} (language = "{setting}" in the settings)'
    system = system_language()
    if system is not None:
        return f"{LANGUAGES[system]} (the system's language)"
    return "the server's, when it is English or Czech; else English (no system language set)"


# --- sign-in -----------------------------------------------------------------------------------


def _keyring_row(section: _Section, settings: Settings) -> None:
    # Imported here: keyring backends load only when asked (D-Bus, Secret Service).
    from talkie_tui.auth.store import keyring_status

    status = keyring_status(KEYRING_TIMEOUT)
    if status.available:
        section.add(OK, "keyring", f"{status.backend}: sign-ins are kept there")
        return
    if settings.token_storage == "keyring":  # noqa: S105 - a store name, not a secret
        instead = (
            "when you sign in, talkie asks where to keep the sign-in instead: a file readable "
            'only by you, or this session only (or set token_storage = "file" in config.toml)'
        )
    else:
        instead = f'not needed: token_storage = "{settings.token_storage}"'
    section.add(
        BAD, "keyring", f"not available: {status.reason}. {instead[0].upper()}{instead[1:]}."
    )


def _browser_row(section: _Section) -> None:
    from talkie_tui.browser import browser_description

    description = browser_description()
    if description.startswith("none"):
        section.add(
            INFO,
            "browser",
            f"{description}. Sign-in shows an address instead: open it in a browser on any "
            "computer, then paste the address it ends on.",
        )
    else:
        section.add(OK, "browser", f"{description} (sign-in opens it)")


# --- audio -------------------------------------------------------------------------------------


def _audio() -> _Section:
    section = _Section("Voice")
    # Imported here: numpy and PortAudio load only for this check (docs/ARCHITECTURE.md).
    try:
        from talkie_tui.voice.audio import AudioUnavailable, list_devices, portaudio_version
    except ImportError as error:  # numpy or another voice dependency is missing
        section.add(BAD, "audio", f"unavailable: {error}. {_VOICE_OFF}")
        return section
    try:
        version = portaudio_version()
        devices = list_devices()
    except AudioUnavailable as error:
        section.add(BAD, "audio", f"unavailable: {error.reason}. {_VOICE_OFF}")
        return section
    section.add(OK, "PortAudio", clean_text(version))
    inputs = [d for d in devices if d.is_input]
    outputs = [d for d in devices if d.is_output]
    if not devices:
        section.add(
            BAD,
            "audio devices",
            f"none found. {_VOICE_OFF} Connect a microphone or headset, or check that the "
            "sound server runs (`pactl info`).",
        )
        return section
    for label, chosen, default in (
        ("microphones", inputs, next((d for d in inputs if d.default_input), None)),
        ("speakers", outputs, next((d for d in outputs if d.default_output), None)),
    ):
        if not chosen:
            section.add(BAD, label, f"none found. {_VOICE_OFF}")
            continue
        name = clean_text((default or chosen[0]).name)
        section.add(OK, label, f"{len(chosen)}, default: {name}")
    return section


# --- network -----------------------------------------------------------------------------------


def _network(proxies: ProxySettings, trust: TrustStore) -> _Section:
    section = _Section("Network")
    if proxies.http is None and proxies.https is None:
        section.add(
            INFO, "proxy", "none (HTTPS_PROXY, HTTP_PROXY and ALL_PROXY are not set): direct"
        )
    else:
        for label, proxy in (("https proxy", proxies.https), ("http proxy", proxies.http)):
            if proxy is None:
                section.add(INFO, label, "none: direct")
            else:
                section.add(OK, label, f"{proxy.shown} (from {proxy.source})")
    direct = "localhost, 127.0.0.0/8 and ::1 always"
    if proxies.no_proxy:
        listed = ", ".join(proxies.no_proxy)
        direct += f"; {listed} (from {proxies.no_proxy_source})"
    section.add(INFO, "direct to", direct)
    section.add(OK, "certificates", trust.system)
    for extra in trust.extra:
        if extra.problem:
            section.add(BAD, extra.variable, f"{extra.path} cannot be used: {extra.problem}")
            continue
        held = (
            f"{extra.certificates} certificate{'s' * (extra.certificates != 1)}, "
            if extra.certificates is not None
            else ""
        )
        section.add(OK, extra.variable, f"{extra.path}: {held}trusted as well as the system store")
    return section


async def _check_server(
    http: httpx.AsyncClient, entry: KnownServer, proxies: ProxySettings, allow_private_http: bool
) -> tuple[str, str, str]:
    label = clean_text(entry.label)
    try:
        url = entry.manifest_url or str(
            manifest_url_for(entry.address, allow_private_http=allow_private_http)
        )
        shown = clean_text(entry.origin or entry.address)
        proxy = proxies.proxy_for(url)
        route = f", via proxy {proxy.shown}" if proxy else ""
        started = time.perf_counter()
        server = await wait_within(
            fetch_manifest(http, url, allow_private_http=allow_private_http), SERVER_TIMEOUT + 1
        )
    except TalkieError as error:
        return BAD, label, f"{clean_text(entry.origin or entry.address)}: {error.message}"
    except (TimeoutError, httpx.HTTPError, ValueError) as error:
        reason = "no answer in time" if isinstance(error, TimeoutError) else str(error)
        return BAD, label, f"{clean_text(entry.origin or entry.address)}: {reason}"
    took = (time.perf_counter() - started) * 1000
    if server.server_id != entry.server_id:
        other = clean_text(server.server_id)
        return BAD, label, f"{shown} answers, but as another server ({other})"
    return OK, label, f"{shown}: answers, {took:.0f} ms{route}"


async def _servers(proxies: ProxySettings, allow_private_http: bool) -> _Section:
    known = KnownServers.load()
    entries = [e for e in known.all() if e.address or e.manifest_url]
    section = _Section(f"Servers ({len(entries)} known)")
    for warning in known.warnings:
        section.add(BAD, "servers.json", warning)
    if not entries:
        section.add(INFO, "none", "no server yet (`talkie connect SERVER` remembers it)")
        return section
    async with make_http_client(timeout=httpx.Timeout(SERVER_TIMEOUT)) as http:
        rows = await asyncio.gather(
            *(_check_server(http, e, proxies, allow_private_http) for e in entries)
        )
    section.rows.extend(rows)
    return section


# --- the report --------------------------------------------------------------------------------


def _render(header: str, sections: list[_Section], out: TextIO) -> None:
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    label_width = max((len(label) for s in sections for _, label, _ in s.rows), default=0)
    indent = 2 + 1 + 2 + label_width + 2
    print(header, file=out)
    for section in sections:
        print(f"\n{section.title}", file=out)
        for mark, label, text in section.rows:
            lead = f"  {mark or ' '}  {label:<{label_width}}  "
            wrapped = textwrap.wrap(
                text,
                width=width,
                initial_indent=lead,
                subsequent_indent=" " * indent,
                break_on_hyphens=False,
                break_long_words=False,
            )
            print("\n".join(wrapped) or lead.rstrip(), file=out)


async def doctor(out: TextIO | None = None) -> int:
    """Print the report; returns 0 whatever it finds (it is a report, not a test)."""
    out = out or sys.stdout
    files, settings = _files(settings_path())
    proxies = proxy_settings()
    trust = trust_store()
    sign_in = _Section("Sign-in")

    def check_sign_in() -> _Section:
        _keyring_row(sign_in, settings)
        _browser_row(sign_in)
        return sign_in

    # The keyring (D-Bus) and PortAudio may each take a moment: checked while servers answer.
    sign_in_done, audio, servers = await asyncio.gather(
        asyncio.to_thread(check_sign_in),
        asyncio.to_thread(_audio),
        _servers(proxies, settings.allow_private_http),
    )
    system = f"{platform.system()} {platform.release()} ({platform.machine()})"
    header = f"talkie {__version__} doctor: Python {platform.python_version()} on {system}"
    _render(header, [files, sign_in_done, audio, _network(proxies, trust), servers], out)
    return ExitCode.OK
