"""The hub's own screens in the real `TalkieApp`: the e-mail sign-in (address, code sent, the
code, the hub's words on errors, nothing typed lost) and the devices screen (palette: Devices;
this device marked, one or all others signed out after asking, the storage line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from talkie_tui.backends.cuckoo.devices import as_device, as_storage
from talkie_tui.core.errors import RateLimitedError, ServerError, UnauthorizedError
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.devices import DevicesScreen
from talkie_tui.ui.screens.email_sign_in import EmailSignInScreen
from tests.ui.cuckoo_fake import FakeCuckooBackend, FakeEmailSignIn, cuckoo_app
from tests.ui.flows import screen_text, until
from tests.ui.test_cuckoo_parts import chat


async def sign_in_screen(
    pilot: Pilot[None], sign_in: FakeEmailSignIn, results: list[Any]
) -> EmailSignInScreen:
    app = pilot.app
    await chat(app, pilot)  # type: ignore[arg-type]
    screen = EmailSignInScreen("Cuckoo Test Hub", "https://hub.invalid", sign_in)
    app.push_screen(screen, results.append)
    await until(pilot, lambda: app.screen is screen and screen.is_mounted)
    return screen


async def type_into(pilot: Pilot[None], box: Input, text: str) -> None:
    box.focus()
    for char in text:
        await pilot.press(char)


# --- e-mail sign-in --------------------------------------------------------------------------


async def test_sign_in_goes_from_address_to_code_to_signed_in(tmp_path: Path) -> None:
    sign_in = FakeEmailSignIn()
    results: list[Any] = []
    app = cuckoo_app(FakeCuckooBackend(), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await sign_in_screen(pilot, sign_in, results)
        assert screen.step == "email"
        await until(pilot, lambda: screen.focused is screen.query_one("#email-address"))
        await pilot.press("enter")
        assert screen.status_text == "Type your e-mail address first."
        await type_into(pilot, screen.query_one("#email-address", Input), "ana@example.com")
        await pilot.press("enter")
        await until(pilot, lambda: screen.step == "code")
        assert sign_in.codes_sent == ["ana@example.com"]
        assert "Code sent to ana@example.com." in screen_text(app)
        code = screen.query_one("#email-code", Input)
        assert screen.focused is code
        await type_into(pilot, code, "42x4242")  # not a digit: not taken
        assert code.value == "424242"
        await pilot.press("enter")
        await until(pilot, lambda: results == ["session for ana@example.com"])
        assert sign_in.tried == [("ana@example.com", "424242")]


async def test_a_wrong_code_says_so_and_keeps_what_was_typed(tmp_path: Path) -> None:
    wrong = UnauthorizedError(
        "The code is wrong or expired.", status=401, code="invalid_code", retryable=False
    )
    sign_in = FakeEmailSignIn(verify_failures=[wrong])
    results: list[Any] = []
    app = cuckoo_app(FakeCuckooBackend(), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await sign_in_screen(pilot, sign_in, results)
        await type_into(pilot, screen.query_one("#email-address", Input), "ana@example.com")
        await pilot.press("enter")
        await until(pilot, lambda: screen.step == "code")
        code = screen.query_one("#email-code", Input)
        await type_into(pilot, code, "111111")
        await pilot.press("enter")
        await until(pilot, lambda: "wrong" in screen.status_text)
        assert screen.status_text.startswith("✗ The code is wrong or expired.")
        assert code.value == "111111" and screen.focused is code  # kept, to be corrected
        assert screen.query_one("#email-address", Input).value == "ana@example.com"
        code.value = ""
        await type_into(pilot, code, "424242")
        await pilot.press("enter")
        await until(pilot, lambda: results == ["session for ana@example.com"])


async def test_too_many_codes_says_how_long_to_wait(tmp_path: Path) -> None:
    limited = RateLimitedError(
        "Too many codes for this address.",
        status=429,
        code="too_many_codes",
        retryable=True,
        retry_after=95,
    )
    refused = ServerError(
        "This is not an e-mail address.",
        status=422,
        code="invalid_email",
        retryable=False,
        field="email",
    )
    sign_in = FakeEmailSignIn(send_failures=[refused, limited])
    results: list[Any] = []
    app = cuckoo_app(FakeCuckooBackend(), tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await sign_in_screen(pilot, sign_in, results)
        address = screen.query_one("#email-address", Input)
        await type_into(pilot, address, "ana@bad")
        await pilot.press("enter")
        await until(pilot, lambda: "not an e-mail" in screen.status_text)
        assert screen.step == "email" and address.value == "ana@bad"
        address.value = "ana@example.com"
        await pilot.press("enter")
        await until(pilot, lambda: "Too many codes" in screen.status_text)
        assert "Try again in 1:35." in screen.status_text
        assert screen.step == "email" and address.value == "ana@example.com"
        await pilot.press("enter")  # asked again at once: the screen says to wait
        assert screen.status_text.startswith("Wait ")
        assert sign_in.codes_sent == []
        await pilot.press("escape")
        await until(pilot, lambda: results == [None])


# --- devices ---------------------------------------------------------------------------------


async def open_devices(pilot: Pilot[None], backend: FakeCuckooBackend) -> DevicesScreen:
    app = pilot.app
    await chat(app, pilot)  # type: ignore[arg-type]
    await app.run_action("devices")
    await until(pilot, lambda: isinstance(app.screen, DevicesScreen))
    screen = app.screen
    assert isinstance(screen, DevicesScreen)
    await until(pilot, lambda: len(screen.devices) == len(backend.device_list))
    await until(pilot, lambda: bool(screen.storage_text))
    return screen


async def test_devices_are_listed_with_this_device_first_and_the_storage(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        assert app.check_action("devices", ()) is True
        screen = await open_devices(pilot, backend)
        assert [device.name for device in screen.devices] == [
            "talkie on laptop",
            "Pixel 8",
            "iPad",
        ]
        text = screen_text(app)
        assert "talkie on laptop · this device  used just now" in text
        assert "Pixel 8  used 3 h ago" in text
        assert "iPad  used 5 days ago" in text
        assert screen.storage_text == (
            "Files: 12.4 MB of 100 MB · messages kept for 90 days, since 2026-03-02"
        )


async def test_ending_one_device_asks_first(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_devices(pilot, backend)
        await pilot.press("e")  # this device is highlighted: not ended here
        assert "Sign out (Ctrl+P)" in screen.status_text and backend.ended == []
        await pilot.press("down")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")  # Cancel has the focus: a stray Enter ends nothing
        await until(pilot, lambda: app.screen is screen)
        assert backend.ended == []
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.click("#confirm")
        await until(pilot, lambda: backend.ended == ["ses_phone"])
        await until(pilot, lambda: len(screen.devices) == 2)
        assert screen.status_text == "Pixel 8 is signed out."


async def test_ending_all_other_devices(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_devices(pilot, backend)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Sign out 2 other devices?" in screen_text(app)
        await pilot.click("#confirm")
        await until(pilot, lambda: backend.ended == [None])
        await until(pilot, lambda: [d.name for d in screen.devices] == ["talkie on laptop"])
        assert screen.status_text == "Every other device is signed out."
        assert screen.query_one("#devices-end-others").disabled
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, DevicesScreen))


async def test_a_failure_shows_the_servers_words(tmp_path: Path) -> None:
    backend = FakeCuckooBackend()
    backend.device_failure = ServerError(
        "The hub is busy.", status=503, code="unavailable", retryable=True
    )
    app = cuckoo_app(backend, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await chat(app, pilot)
        await app.run_action("devices")
        await until(pilot, lambda: isinstance(app.screen, DevicesScreen))
        screen = app.screen
        assert isinstance(screen, DevicesScreen)
        await until(pilot, lambda: screen.is_mounted)
        await until(pilot, lambda: "The hub is busy." in screen.status_text)
        assert screen.status_text.startswith("The devices could not be read: The hub is busy.")
        backend.device_failure = None
        await pilot.press("r")
        await until(pilot, lambda: len(screen.devices) == 3)
        assert screen.query_one(OptionList).option_count == 3


def test_the_hubs_own_records_are_read_too() -> None:
    """The hub backend hands over its wire records; the screen reads them by their fields."""
    from talkie_tui.protocol.cuckoo.models import Device, Storage

    device = as_device(
        Device.model_validate(
            {"id": "ses_1", "name": "Phone", "last_seen_at": "2026-07-01T10:00:00Z", "current": 1}
        )
    )
    assert (device.id, device.name, device.current) == ("ses_1", "Phone", True)
    assert device.last_used is not None and device.last_used.year == 2026
    storage = as_storage(
        Storage.model_validate(
            {
                "media": {"used_bytes": 5, "budget_bytes": 10},
                "messages": {"kept_days": 90, "kept_since": "2026-04-01T00:00:00Z"},
            }
        )
    )
    assert (storage.used_bytes, storage.budget_bytes, storage.kept_days) == (5, 10, 90)
