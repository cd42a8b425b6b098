"""The composer's extras in the real app: files, the thread's model, dictation.

A backend of the test suite (`extras_fake.ExtrasBackend`) offers what a Minara gateway offers;
the real `TalkieApp` attaches, uploads, sends, refuses and dictates through it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Button, Input, OptionList

from talkie_tui.backends.base import Capabilities
from talkie_tui.chat.turns import AttachmentPart
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat import dictation as dictation_ui
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.screens.attach_prompt import AttachPromptScreen
from talkie_tui.ui.screens.confirm import ConfirmScreen
from talkie_tui.ui.screens.model_picker import ModelPickerScreen
from talkie_tui.ui.widgets.attachment_tray import AttachmentRow, AttachmentTray
from talkie_tui.voice.memory_audio import ScriptedMicrophone
from talkie_tui.voice.sound import AudioUnavailable
from tests.ui.attachments import PDF, PNG, attach, chat, make_file
from tests.ui.extras_fake import ExtrasBackend, extras_app
from tests.ui.flows import screen_text, screen_up, until

MiB = 1024 * 1024


async def send(pilot: Pilot[None], screen: ChatScreen, text: str) -> None:
    before = len(screen.session.conversation.turns)
    screen.composer.focus()
    screen.composer.insert(text)
    await pilot.press("enter")
    await until(
        pilot,
        lambda: not screen.answering and len(screen.session.conversation.turns) >= before + 2,
    )
    await pilot.pause()


def paste(screen: ChatScreen, app: TalkieApp, text: str) -> None:
    """A paste from the terminal, as the app hands it to the focused composer."""
    screen.composer.focus()
    app.post_message(events.Paste(text))


def rows(screen: ChatScreen) -> list[AttachmentRow]:
    return list(screen.query(AttachmentRow))


def notices(app: TalkieApp) -> str:
    return " ".join(str(n.message) for n in app._notifications)


# --- files -------------------------------------------------------------------------------------


async def test_an_attached_file_uploads_with_progress_and_goes_with_the_message(
    tmp_path: Path,
) -> None:
    backend = ExtrasBackend()
    gate = backend.hold_uploads()
    chart = make_file(tmp_path, "chart.png", PNG, 48_213)
    app = extras_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await attach(pilot, screen, chart)
        assert screen.composer.text == ""  # the command left the box; it was never sent
        await until(pilot, lambda: "50% uploading" in screen_text(app))
        assert "chart.png" in screen_text(app) and "image" in screen_text(app)
        assert screen.query_one(AttachmentTray).display
        # Enter while it uploads: the message waits, with its text kept.
        screen.composer.insert("what does this chart show?")
        await pilot.press("enter")
        await pilot.pause()
        assert backend.sent == [] and "still uploading" in notices(app)
        assert screen.composer.text == "what does this chart show?"
        gate.set()
        await until(pilot, lambda: "✓ uploaded" in screen_text(app))
        await pilot.press("enter")
        await until(pilot, lambda: not screen.answering and len(backend.sent) == 1)
        await pilot.pause()
        text, extras = backend.prepared[-1]
        assert text == "what does this chart show?"
        assert [a.filename for a in extras["attachments"]] == ["chart.png"]
        assert extras["attachments"][0].kind == "image"
        assert "I received chart.png, 48 kB" in screen_text(app)
        user = screen.session.conversation.turns[0]
        assert [p.filename for p in user.parts if isinstance(p, AttachmentPart)] == ["chart.png"]
        assert rows(screen) == [] and not screen.query_one(AttachmentTray).display
        # The next message goes without it.
        await send(pilot, screen, "and now?")
        assert backend.prepared[-1][1]["attachments"] == ()


async def test_limits_refuse_before_any_upload_with_the_reason(tmp_path: Path) -> None:
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    big_image = make_file(tmp_path, "big.png", PNG, 6 * MiB)
    big_pdf = make_file(tmp_path, "big.pdf", PDF, 21 * MiB)
    notes = [make_file(tmp_path, f"note{i}.txt", b"hello\n", 6) for i in range(9)]
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await attach(pilot, screen, big_image)
        assert "An image may be at most 5 MiB; this one is 6 MiB." in notices(app)
        await attach(pilot, screen, big_pdf)
        assert "A file may be at most 20 MiB; this one is 21 MiB." in notices(app)
        assert rows(screen) == [] and backend.uploaded == []
        assert screen.composer.text == f"/attach {big_pdf}"  # refused: the command stays
        for note in notes[:8]:
            await attach(pilot, screen, note)
        await until(pilot, lambda: len(backend.uploaded) == 8)
        await attach(pilot, screen, notes[8])
        assert "note8.txt is not attached: A message takes at most 8 files." in notices(app)
        await pilot.pause(0.1)
        assert len(rows(screen)) == 8 and notes[8] not in backend.uploaded


async def test_a_file_is_removed_by_its_button_or_delete(tmp_path: Path) -> None:
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    first = make_file(tmp_path, "a.pdf", PDF, 2000)
    second = make_file(tmp_path, "b.csv", b"x,y\n1,2\n", 8)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await attach(pilot, screen, first)
        await attach(pilot, screen, second)
        await until(pilot, lambda: len(backend.uploaded) == 2)
        await pilot.pause()
        assert len(rows(screen)) == 2
        await pilot.click(rows(screen)[0].query_one(Button))
        await until(pilot, lambda: len(rows(screen)) == 1)
        assert rows(screen)[0].item.file.filename == "b.csv"
        assert rows(screen)[0].item.file.kind == "spreadsheet"
        rows(screen)[0].query_one(Button).focus()
        await pilot.press("delete")
        await until(pilot, lambda: rows(screen) == [])
        assert screen.focused is screen.composer
        await send(pilot, screen, "nothing attached")
        assert backend.prepared[-1][1]["attachments"] == ()


async def test_ctrl_f_and_a_pasted_path_attach_a_file(tmp_path: Path) -> None:
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    report = make_file(tmp_path, "report.pdf", PDF, 3000)
    sheet = make_file(tmp_path, "sheet.csv", b"a,b\n", 4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await pilot.press("ctrl+f")
        await until(pilot, lambda: screen_up(app, AttachPromptScreen))
        app.screen.query_one(Input).value = str(report)
        await pilot.press("enter")
        await until(pilot, lambda: len(backend.uploaded) == 1)
        paste(screen, app, f"'{sheet}'")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await until(pilot, lambda: bool(app.screen.query("#confirm")))
        await pilot.pause()  # laid out: the click lands on the button
        await pilot.click("#confirm")
        await until(pilot, lambda: len(backend.uploaded) == 2)
        assert screen.composer.text == ""
        # A path declined is pasted as text; a path of no file is just text.
        paste(screen, app, str(report))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        await until(pilot, lambda: screen.composer.text == str(report))
        screen.composer.clear()
        paste(screen, app, "/no/such/file.pdf")
        await until(pilot, lambda: screen.composer.text == "/no/such/file.pdf")
        assert len(rows(screen)) == 2


async def test_a_failed_send_keeps_the_files_and_the_text(tmp_path: Path) -> None:
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    chart = make_file(tmp_path, "chart.png", PNG, 1000)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await attach(pilot, screen, chart)
        await until(pilot, lambda: len(backend.uploaded) == 1)
        # A model the gateway does not serve (picked before it withdrew it, say).
        from talkie_tui.backends.base import ModelChoice
        from talkie_tui.ui.screens.model_picker import ModelPick

        screen.models.choose(ModelPick(ModelChoice("minara-gone", "Gone")))
        screen.composer.insert("explain the chart")
        await pilot.press("enter")
        await until(pilot, lambda: not screen.answering and bool(backend.prepared))
        await pilot.pause()
        assert backend.sent == []
        assert "Unknown model 'minara-gone'" in notices(app)
        assert "Unknown model 'minara-gone'" in screen_text(app)
        assert screen.composer.text == "explain the chart"
        assert [r.item.file.filename for r in rows(screen)] == ["chart.png"]
        # Back to the default: the same text and file go through.
        screen.models.choose(ModelPick(None))
        await pilot.press("enter")
        await until(pilot, lambda: len(backend.sent) == 1 and not screen.answering)
        assert [a.filename for a in backend.sent[0].extras["attachments"]] == ["chart.png"]
        assert "model" not in backend.sent[0].extras
        await until(pilot, lambda: rows(screen) == [])


# --- the thread's model -------------------------------------------------------------------


async def pick(pilot: Pilot[None], app: TalkieApp, option_id: str) -> None:
    """Choose the option `option_id` of the picker on screen."""
    await until(pilot, lambda: bool(app.screen.query(OptionList)))
    options = app.screen.query_one(OptionList)
    index = next(i for i, o in enumerate(options.options) if o.id == option_id)
    options.highlighted = index
    await pilot.press("enter")
    await pilot.pause()


async def test_the_thread_model_is_picked_in_the_palette_shown_and_sent(tmp_path: Path) -> None:
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Model for")
        await app.screen.workers.wait_for_complete()
        await pilot.pause(0.1)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ModelPickerScreen))
        assert "Server default (Minara Fast)" in screen_text(app)
        await pick(pilot, app, "minara-pro")
        assert "Reasoning effort of Minara Pro" in screen_text(app)
        await pick(pilot, app, "high")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        assert "Message · Minara Pro · high effort" in screen_text(app)
        await send(pilot, screen, "think hard")
        extras = backend.prepared[-1][1]
        assert (extras["model"], extras["reasoning_effort"]) == ("minara-pro", "high")
        assert "Answered by minara-pro (high)" in screen_text(app)
        # The pick is this thread's: a new thread starts with the server's default.
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert "Minara Pro" not in str(screen.composer.border_title)
        await send(pilot, screen, "quick one")
        assert "model" not in backend.prepared[-1][1]
        # A model without reasoning takes no effort step.
        screen.action_choose_model()
        await until(pilot, lambda: isinstance(app.screen, ModelPickerScreen))
        await pick(pilot, app, "minara-fast")
        await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.is_mounted)
        assert screen.models.extras() == {"model": "minara-fast", "reasoning_effort": None}


async def test_a_talkie_server_offers_none_of_the_extras(tmp_path: Path) -> None:
    backend = ExtrasBackend(Capabilities())
    app = extras_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        for action in ("attach", "choose_model", "dictate"):
            assert screen.check_action(action, ()) is False
            assert app.check_action(action, ()) is False
        await pilot.press("f6")  # the composer's own F6 (select line); no recording
        await pilot.pause()
        assert screen.dictation.state == "idle"
        await send(pilot, screen, "plain")
        assert backend.prepared[-1] == ("plain", {})


# --- dictation -----------------------------------------------------------------------------


@pytest.fixture
def microphone(monkeypatch: pytest.MonkeyPatch) -> ScriptedMicrophone:
    """The dictation's microphone is a scripted one "hearing" a tone."""
    mic = ScriptedMicrophone()
    tone = (np.sin(np.arange(48_000) * 2 * np.pi * 440 / 48_000) * 8000).astype(np.int16)
    mic.say(tone)
    monkeypatch.setattr(dictation_ui, "make_microphone", lambda options: mic)
    return mic


async def test_dictation_puts_the_text_in_the_composer_and_never_sends_it(
    tmp_path: Path, microphone: ScriptedMicrophone
) -> None:
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        screen.composer.insert("Note:")
        await pilot.press("f6")
        await until(pilot, lambda: "Recording 00:0" in screen_text(app))
        await until(pilot, lambda: screen.dictation_bar.level > 0.3)
        await asyncio.sleep(0.5)
        await pilot.press("enter")  # stops the recording; sends nothing
        await until(pilot, lambda: screen.dictation.state == "idle")
        assert screen.composer.text == "Note: Buy two kilos of apples"
        assert backend.prepared == [] and backend.sent == []
        wav = backend.recordings[0]
        assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"
        assert len(wav) > 16_000 * 2 * 0.4  # about half a second at 16 kHz
        assert not microphone.running
        await pilot.press("enter")
        await until(pilot, lambda: len(backend.sent) == 1 and not screen.answering)
        assert backend.sent[0].text == "Note: Buy two kilos of apples"
        assert backend.sent[0].extras["voice_input_key"] == "chat/files/voice-1.wav"
        await send(pilot, screen, "typed")
        assert "voice_input_key" not in backend.prepared[-1][1]


async def test_esc_throws_a_dictation_away(tmp_path: Path, microphone: ScriptedMicrophone) -> None:
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await pilot.press("f6")
        await until(pilot, lambda: screen.dictation.state == "recording")
        await pilot.pause(0.2)
        await pilot.press("escape")
        await until(pilot, lambda: screen.dictation.state == "idle")
        await pilot.pause(0.1)
        assert backend.recordings == [] and screen.composer.text == ""
        assert not screen.dictation_bar.display


async def test_no_microphone_is_said_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(options: object) -> ScriptedMicrophone:
        raise AudioUnavailable("no input device was found")

    monkeypatch.setattr(dictation_ui, "make_microphone", missing)
    backend = ExtrasBackend()
    app = extras_app(backend, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat(app, pilot)
        await pilot.press("f6")
        await until(pilot, lambda: "no input device was found" in notices(app))
        assert "Dictation needs a microphone" in notices(app)
        assert screen.dictation.state == "idle" and not screen.dictation_bar.display
