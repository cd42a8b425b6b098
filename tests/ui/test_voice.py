"""Voice in the chat screen: the real reference server with its fake provider (WebRTC on
127.0.0.1), a scripted microphone and a recording speaker in place of the sound card.

The fake provider hears energy, not words: each tone "said" while the talk key is on takes the
next line of its English demo script ("Who is Petr Novák?" → a card, "Send him the offer." →
an action confirmable by voice with the keyword "send", "Yes, send it." → the decision).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot

from talkie_tui.config import KnownServers, Settings
from talkie_tui.protocol.talkie.models import Action
from talkie_tui.ui.app import TalkieApp
from talkie_tui.ui.chat import voice as voice_ui
from talkie_tui.ui.chat.screen import ChatScreen
from talkie_tui.ui.chat.voice import consent_phrase, describe_heard
from talkie_tui.ui.widgets.action_card import ActionCard
from talkie_tui.ui.widgets.card import CardView
from talkie_tui.ui.widgets.thread_list import ThreadList
from talkie_tui.ui.widgets.transcript import TurnView
from talkie_tui.ui.widgets.voice_bar import VoiceBar, format_clock, format_left, meter
from talkie_tui.voice.audio import AudioPair, AudioUnavailable
from talkie_tui.voice.call import VoiceCall
from talkie_tui.voice.memory_audio import ScriptedMicrophone
from tests.helpers import TEST_TOKEN
from tests.ui.apps.voice_app import VoiceBarsApp, every_state, fixed_bar
from tests.ui.flows import chat_screen, send, until
from tests.ui.snapshot_steps import ask, fixed_app
from tests.voice.call_helpers import decisions, server_test_endpoint, tone
from tests.voice.fakes import scripted_audio

CALL_TIMEOUT = 30  # one step of the scripted call (the provider speaks in real time)


# The English demo scenario, with plain answers to the proposal (see `script()`).
LOOKUP = {
    "user": "Who is Petr Novák?",
    "tool": "search_contacts",
    "arguments": {"query": "Petr Novák"},
    "reply": "Here is his card.",
}
OFFER = {
    "user": "Send him the offer.",
    "tool": "send_offer_email",
    "arguments": {"company": "Alfa"},
    "reply": "The offer is ready. Say yes, send.",
}


# Long enough (about 20 s of speech) that a test can interrupt it however loaded the machine is.
LONG_REPLY = (
    "Here is his card. Petr Novák buys for Alfa, and he has ordered from us every spring. "
    "His last order was delivered in March, and he paid within a week. "
    "He prefers email to phone calls, and he asked about the new price list last month."
)


def script(tmp_path: Path, *answers: str, lookup_reply: str | None = None) -> Path:
    """A fake-provider script: the lookup, the offer, then `answers` to the proposal."""
    lookup = {**LOOKUP, "reply": lookup_reply} if lookup_reply else LOOKUP
    lines = [lookup, OFFER, *({"user": text, "reply": "All right."} for text in answers)]
    path = tmp_path / "voice-script.json"
    path.write_text(json.dumps({"en": lines}), encoding="utf-8")
    return path


@pytest.fixture
def voice_server(devserver: Callable[..., str], tmp_path: Path) -> Callable[..., str]:
    """`voice_server(*answers)`: the reference server with the fake provider and that script."""

    def start(*answers: str, lookup_reply: str | None = None) -> str:
        return devserver(
            test_mode=True,
            fake_voice=True,
            fake_voice_script=script(tmp_path, *answers, lookup_reply=lookup_reply),
            dev_token=TEST_TOKEN,
            demo_delay=0,
        )

    return start


@pytest.fixture
def voice_url(voice_server: Callable[..., str]) -> str:
    """The reference server whose scripted caller confirms the proposal: "Yes, send."."""
    return voice_server("Yes, send.")


@pytest.fixture
def audio(monkeypatch: pytest.MonkeyPatch) -> list[AudioPair]:
    """The chat screen's audio factory gives scripted devices; the list holds each pair made."""
    made: list[AudioPair] = []

    def make(options: voice_ui.VoiceOptions) -> AudioPair:
        pair = scripted_audio()
        made.append(pair)
        return pair

    monkeypatch.setattr(voice_ui, "make_audio", make)
    return made


def voice_app(url: str, tmp_path: Path) -> TalkieApp:
    """The app as `talkie demo` opens it: the provider on 127.0.0.1 may use plain http."""
    settings = Settings(downloads_dir=tmp_path / "downloads")
    return TalkieApp(url, token=TEST_TOKEN, settings=settings, known=KnownServers.load(), demo=True)


def state(screen: ChatScreen) -> str | None:
    """The call's state as the bar shows it (None without a call)."""
    bar = screen.voice_bar
    return bar.state if bar is not None and bar.status is not None else None


async def until_state(
    pilot: Pilot[None], screen: ChatScreen, wanted: str, timeout: float = CALL_TIMEOUT
) -> None:
    """Let the app run until the bar shows `wanted`; a failure names the state it shows."""
    await until_call(
        pilot, screen, lambda: state(screen) == wanted, f"the state {wanted!r}", timeout
    )


async def until_call(
    pilot: Pilot[None],
    screen: ChatScreen,
    condition: Callable[[], bool],
    what: str,
    timeout: float = CALL_TIMEOUT,
) -> None:
    """Let the app run until `condition`; a failure tells the call's state and provider log."""
    try:
        await until(pilot, condition, timeout=timeout)
    except AssertionError:
        raise AssertionError(
            f"the call never got {what}; it is {state(screen)!r}\n{provider_log(screen)}\n"
            f"{client_log(screen)}"
        ) from None


def client_log(screen: ChatScreen, last: int = 4) -> str:
    """The conversation's latest turns and the app's notices, to explain a failed step."""
    lines = []
    for turn in screen.session.conversation.turns[-last:]:
        parts = ", ".join(type(part).__name__ for part in turn.parts)
        lines.append(f"turn {turn.role}/{turn.channel}: {turn.text[:80]!r} [{parts}]")
    lines += [f"notice: {notice.message}" for notice in screen.app._notifications]
    return "\n".join(lines)


def provider_log(screen: ChatScreen, last: int = 20) -> str:
    """The fake provider's latest events each way, to explain a call that went wrong."""
    call = screen.call
    if call is None or call.session is None:
        return "(no call)"
    provider = httpx.URL(call.session.signaling.url).join("/fake-voice/calls")
    try:
        calls = httpx.get(provider, timeout=5).json()["calls"]
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        return f"(no provider log: {exc})"

    def latest(events: list[str]) -> list[str]:
        return [event for event in events if not event.endswith(".delta")][-last:]

    return "\n".join(
        f"provider call {call['callId']}: received {latest(call['received'])}, "
        f"sent {latest(call['sent'])}"
        for call in calls
    )


async def start_call(pilot: Pilot[None], screen: ChatScreen) -> ScriptedMicrophone:
    """F5, then wait until the call listens; the scripted microphone of the call."""
    await until(pilot, lambda: screen.voice_offered)
    await pilot.press("f5")
    await until_state(pilot, screen, "listening")
    call = screen.call
    assert call is not None
    microphone = call.microphone
    assert isinstance(microphone, ScriptedMicrophone)
    return microphone


async def started_call(pilot: Pilot[None], screen: ChatScreen) -> VoiceCall:
    """Start a call and return it, with its voice session."""
    await start_call(pilot, screen)
    call = screen.call
    assert call is not None and call.session is not None
    return call


async def talk(
    pilot: Pilot[None], screen: ChatScreen, microphone: ScriptedMicrophone, key: str = "f6"
) -> None:
    """Toggle talking on with the key, "say" a tone, toggle it off (no key release exists).

    Like a person who keeps talking until they are heard, the key goes off only once the
    provider has the tone: a loaded machine may decode it later than the commit arrives.
    """
    await pilot.press(key)
    await until_state(pilot, screen, "talking", 10)
    microphone.say(tone())
    await microphone.said()
    await until_heard(pilot, screen, HEARD_MS)
    await pilot.press(key)


HEARD_MS = 300  # of the 800 ms tone: plenty for the provider's speech detection (60 ms)


async def until_heard(pilot: Pilot[None], screen: ChatScreen, loud_ms: int) -> None:
    """Let the app run until the provider's input buffer holds `loud_ms` of loud audio."""
    call = screen.call
    assert call is not None and call.session is not None
    calls = httpx.URL(call.session.signaling.url).join("/fake-voice/calls")
    heard = 0
    async with httpx.AsyncClient(timeout=5) as http:
        for _attempt in range(200):
            answer = (await http.get(calls)).json()["calls"]
            heard = max((each.get("bufferLoudMs", 0) for each in answer), default=0)
            if heard >= loud_ms:
                return
            await pilot.pause(0.05)
    raise AssertionError(f"the provider heard {heard} ms of the tone\n{provider_log(screen)}")


def spoken(screen: ChatScreen, role: str) -> int:
    """How many turns of `role` were said in the call so far."""
    turns = screen.session.conversation.turns
    return sum(1 for turn in turns if turn.channel == "voice" and turn.role == role and turn.text)


async def until_proposal(
    pilot: Pilot[None], screen: ChatScreen, microphone: ScriptedMicrophone
) -> None:
    """Ask about the customer (a card), then for the offer, until its consent window opens."""
    await talk(pilot, screen, microphone)
    await until_call(pilot, screen, lambda: bool(screen.transcript.query(CardView)), "a card")
    # The assistant reads the card out; the next sentence waits until it is done.
    await until_call(pilot, screen, lambda: spoken(screen, "assistant") >= 1, "a spoken answer")
    await until_state(pilot, screen, "listening")
    await talk(pilot, screen, microphone)
    await until_call(pilot, screen, lambda: bool(screen.transcript.query(ActionCard)), "an action")
    await until_state(pilot, screen, "consent")


def pending_action(screen: ChatScreen) -> Action | None:
    """The action waiting for a decision in the conversation, if any."""
    for part in screen.session.conversation.actions.values():
        if part.action.status == "pending":
            return part.action
    return None


@pytest.mark.voice
@pytest.mark.slow
async def test_a_call_shows_cards_and_a_spoken_yes_confirms_the_action(
    voice_url: str, audio: list[AudioPair], tmp_path: Path
) -> None:
    app = voice_app(voice_url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        assert screen.voice_bar is None
        await until(pilot, lambda: screen.voice_offered)
        assert app.check_action("voice_call", ()) is True  # offered in the palette too
        microphone = await start_call(pilot, screen)
        assert isinstance(screen.voice_bar, VoiceBar)
        assert screen.check_action("talk", ()) is True
        assert app.check_action("hang_up", ()) is True

        # "Who is Petr Novák?" (a card, read out), "Send him the offer." (an action card):
        # once the proposal was read out, the consent window opens with its countdown.
        await until_proposal(pilot, screen, microphone)
        said = [turn for turn in screen.session.conversation.turns if turn.channel == "voice"]
        assert said[0].role == "user" and said[0].text == "Who is Petr Novák?"
        assert any(turn.role == "assistant" and turn.text for turn in said)
        views = screen.transcript.query(TurnView)
        assert any("-voice" in view.classes for view in views), "spoken turns are marked"
        action = pending_action(screen)
        assert action is not None and "voice" in action.confirm.methods
        bar = screen.voice_bar
        assert bar is not None
        bar.tick(0.0, bar.elapsed, time.monotonic())
        assert bar.state_text().startswith("Say “yes, send” to confirm · ")
        assert 0 < (bar.consent_left or 0) <= 15
        assert screen.header.pending_actions == 1

        # "Yes, send." (Ctrl+Space as a legacy terminal sends it): confirmed by voice, the
        # card follows, and the server recorded the method "voice".
        await talk(pilot, screen, microphone, "ctrl+@")
        card = screen.transcript.query_one(ActionCard)
        await until(pilot, lambda: card.action.status in ("running", "done"), timeout=CALL_TIMEOUT)
        assert [d["method"] for d in decisions(screen.client, action.id)] == ["voice"]
        assert screen.header.pending_actions == 0

        # The thread list marks the call's thread as a voice thread.
        thread_id = screen.session.thread_id
        assert thread_id is not None
        threads = screen.query_one(ThreadList)
        await until(pilot, lambda: any(t.id == thread_id for t in threads.threads))
        assert next(t for t in threads.threads if t.id == thread_id).channel == "voice"

        # F5 hangs up: the bar goes, the final usage report reached the server.
        call = screen.call
        assert call is not None and call.session is not None
        await pilot.press("f5")
        await until(pilot, lambda: screen.call is None and screen.voice_bar is None)
        assert not screen.query(VoiceBar)
        report = server_test_endpoint(
            screen.client, f"voice/sessions/{call.session.voice_session_id}"
        )
        assert report["usageReports"][-1]["final"] is True
        assert audio[0].microphone.running is False and audio[0].speaker.running is False


@pytest.mark.voice
@pytest.mark.slow
async def test_the_card_buttons_still_decide_during_a_call(
    voice_url: str, audio: list[AudioPair], tmp_path: Path
) -> None:
    app = voice_app(voice_url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        microphone = await start_call(pilot, screen)
        await until_proposal(pilot, screen, microphone)
        card = screen.transcript.query_one(ActionCard)
        while card.is_guarded:
            await pilot.pause(0.05)
        card.focus()
        await pilot.press("n")
        await until(pilot, lambda: card.action.status == "cancelled", timeout=CALL_TIMEOUT)
        assert [d["method"] for d in decisions(screen.client, card.action.id)] == ["button"]
        call = screen.call
        assert call is not None and call.consent_window is None  # voice can no longer decide
        await until(pilot, lambda: state(screen) != "consent", timeout=CALL_TIMEOUT)


@pytest.mark.voice
@pytest.mark.slow
async def test_an_answer_that_is_not_a_yes_is_explained_in_the_bar(
    voice_server: Callable[..., str], audio: list[AudioPair], tmp_path: Path
) -> None:
    app = voice_app(voice_server("Maybe, send."), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        microphone = await start_call(pilot, screen)
        await until_proposal(pilot, screen, microphone)
        await talk(pilot, screen, microphone)
        bar = screen.voice_bar
        assert bar is not None
        await until(pilot, lambda: bool(bar.heard), timeout=CALL_TIMEOUT)
        assert bar.heard == "Heard “Maybe, send.”: not a confirmation (hesitation)"
        action = pending_action(screen)
        assert action is not None and decisions(screen.client, action.id) == []


@pytest.mark.voice
@pytest.mark.slow
async def test_esc_interrupts_the_assistant_and_f7_switches_to_hands_free(
    voice_server: Callable[..., str], audio: list[AudioPair], tmp_path: Path
) -> None:
    app = voice_app(voice_server(lookup_reply=LONG_REPLY), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        microphone = await start_call(pilot, screen)
        await talk(pilot, screen, microphone, "ctrl+space")
        await until_state(pilot, screen, "assistant_speaking")
        # The footer's bindings refresh a moment after the state changes.
        await until(pilot, lambda: screen.active_bindings["escape"].binding.action == "barge_in")
        await pilot.press("escape")
        await until_state(pilot, screen, "listening", 5)
        assert not audio[0].speaker.playing
        await until(pilot, lambda: screen.active_bindings["escape"].binding.action == "cancel_run")

        await pilot.press("f7")
        bar = screen.voice_bar
        assert bar is not None
        await until(pilot, lambda: bar.status is not None and bar.status.mode == "hands_free")
        assert screen.check_action("talk", ()) is False
        assert not microphone.muted  # hands-free: the provider listens all the time
        await pilot.press("f7")
        await until(pilot, lambda: bar.status is not None and bar.status.mode == "push_to_talk")
        assert microphone.muted


@pytest.mark.voice
@pytest.mark.slow
async def test_leaving_the_app_hangs_up(
    voice_url: str, audio: list[AudioPair], tmp_path: Path
) -> None:
    app = voice_app(voice_url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        call = await started_call(pilot, screen)
        client = screen.client
    # After the app exited: no peer, no streams, and the server got the final report.
    assert call.peer is not None and not call.peer.connected
    assert not audio[0].microphone.running and not audio[0].speaker.running
    report = server_test_endpoint(client, f"voice/sessions/{call.session.voice_session_id}")
    assert report["usageReports"] and report["usageReports"][-1]["final"] is True


@pytest.mark.voice
@pytest.mark.slow
async def test_switching_servers_hangs_up_before_the_client_closes(
    voice_url: str, audio: list[AudioPair], tmp_path: Path
) -> None:
    app = voice_app(voice_url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        call = await started_call(pilot, screen)
        client = screen.client
        await app.run_action("switch_server")
        await pilot.pause()
        assert not isinstance(app.screen, ChatScreen)
        assert screen.call is None
        assert not audio[0].microphone.running and not audio[0].speaker.running
        report = server_test_endpoint(client, f"voice/sessions/{call.session.voice_session_id}")
        assert report["usageReports"][-1]["final"] is True


async def test_without_a_sound_card_voice_says_why_and_chat_goes_on(
    voice_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_audio(options: voice_ui.VoiceOptions) -> Any:
        raise AudioUnavailable("no microphone was found (PortAudio lists no input device)")

    monkeypatch.setattr(voice_ui, "make_audio", no_audio)
    app = voice_app(voice_url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await until(pilot, lambda: screen.voice_offered)
        await pilot.press("f5")
        await until(pilot, lambda: bool(app._notifications))
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any(
            m.startswith("Voice is disabled: no microphone was found") and "Chat works" in m
            for m in messages
        ), messages
        assert screen.call is None and screen.voice_bar is None
        await send(pilot, screen, "talkie-test:echo still here")
        assert screen.session.conversation.turns[-1].text == "still here"


async def test_devices_that_fail_to_open_leave_no_bar(
    voice_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sound card refuses at start (after the server opened the session): words, no bar."""

    class BrokenMicrophone(ScriptedMicrophone):
        async def _open(self) -> None:
            raise AudioUnavailable("the microphone 'USB Headset' is busy")

    def broken(options: voice_ui.VoiceOptions) -> AudioPair:
        pair = scripted_audio()
        return AudioPair(BrokenMicrophone(), pair.speaker)

    monkeypatch.setattr(voice_ui, "make_audio", broken)
    app = voice_app(voice_url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await until(pilot, lambda: screen.voice_offered)
        await pilot.press("f5")
        await until(pilot, lambda: any("busy" in n.message for n in app._notifications))
        assert screen.call is None and screen.voice_bar is None
        assert screen.check_action("voice_call", ()) is True  # it may be tried again


async def test_http_signalling_needs_the_development_switch(
    voice_url: str, audio: list[AudioPair], tmp_path: Path
) -> None:
    """Outside `talkie demo`, a provider over plain http is refused with the reason."""
    settings = Settings(downloads_dir=tmp_path / "downloads")
    app = TalkieApp(voice_url, token=TEST_TOKEN, settings=settings, known=KnownServers.load())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await until(pilot, lambda: screen.voice_offered)
        await pilot.press("f5")
        await until(pilot, lambda: any("not https" in n.message for n in app._notifications))
        assert screen.call is None and screen.voice_bar is None


async def test_no_voice_keys_where_the_server_has_no_voice(
    devserver: Callable[..., str], tmp_path: Path
) -> None:
    url = devserver(test_mode=True, dev_token=TEST_TOKEN, demo_delay=0)
    app = voice_app(url, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await chat_screen(app, pilot)
        await app.workers.wait_for_complete()
        assert not screen.voice_offered
        for action in ("voice_call", "hang_up", "talk", "voice_mode", "barge_in"):
            assert screen.check_action(action, ()) is False, action
        keys = screen.active_bindings
        assert "f5" not in keys
        f6 = keys.get("f6")
        assert f6 is None or f6.binding.action != "talk"  # the composer keeps its own F6
        await pilot.press("f5")
        assert screen.voice_bar is None


def test_voice_parts_are_not_loaded_before_a_call() -> None:
    """The chat screen imports no aiortc/PyAV/sounddevice until a call starts."""
    import subprocess
    import sys

    code = (
        "import sys, talkie_tui.ui.app; "
        "print(sorted(m for m in ('aiortc', 'av', 'sounddevice', 'numpy', "
        "'talkie_tui.voice.call') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


# --- the bar's rendering, and snapshots ---------------------------------------------------------


def test_voice_bar_words_in_every_state() -> None:
    rendered = {name: bar.plain for name, bar in every_state()}
    assert rendered["connecting"] == "◌ Connecting…  ▂▃▄▅▆▇  00:00 · 15 min left\nF5 cancel"
    assert rendered["listening"].startswith("○ Listening  ")
    assert "F6 talk · F7 hands-free · F5 hang up" in rendered["listening"]
    assert "just speak · F7 push-to-talk" in rendered["listening, hands-free"]
    assert rendered["talking"].startswith("● Talking  ")
    assert "F6 send" in rendered["talking"]
    assert rendered["listening, hands-free"].startswith("◉ Listening  ")
    assert "Esc interrupt" in rendered["assistant speaking"]
    assert "⠋ Hledám v CRM…" in rendered["tool running"]
    assert rendered["consent"].startswith("⚑ Say “ano, odeslat” to confirm · 12 s  ")
    assert "01:23 · 14 min left · push-to-talk" in rendered["consent"]
    assert "“ne” cancels · y/n on the card" in rendered["consent"]
    assert rendered["ended"].startswith("■ Ended")


def test_meter_and_clocks() -> None:
    assert meter(0.0) == ("", "▂▃▄▅▆▇")
    assert meter(0.5) == ("▂▃▄", "▅▆▇")
    assert meter(1.7) == ("▂▃▄▅▆▇", "")
    assert format_clock(83) == "01:23" and format_clock(3723) == "1:02:03"
    assert format_left(840) == "14 min left" and format_left(59.2) == "1 min left"
    assert format_left(45) == "45 s left" and format_left(-3) == "0 s left"


def test_what_the_consent_window_heard_in_words() -> None:
    from talkie_tui.voice.consent import Heard
    from talkie_tui.voice.consent_classifier import Verdict

    def heard(text: str, verdict: Verdict | None = None, ignored: Any = None) -> Heard:
        return Heard("item_1", text, 0.0, verdict, ignored)

    hesitation = heard("asi ano", Verdict("neither", "hesitation", "asi"))
    assert describe_heard(hesitation) == "Heard “asi ano”: not a confirmation (hesitation)"
    early = heard("ano", ignored="not_in_window")
    assert describe_heard(early) == (
        "Heard “ano”: not counted (said while the assistant was still speaking)"
    )
    assert describe_heard(heard("ano, odeslat", Verdict("confirm", "confirmed", "ano"))) is None
    hostile = heard("\x1b]52;c;ZWNobw==\x07[b]yes[/b] " + "x" * 100, Verdict("neither", "too_long"))
    line = describe_heard(hostile) or ""
    assert "\x1b" not in line and line.endswith(
        "…”: not a confirmation (too long for a confirmation)"
    )


def test_consent_phrase_follows_the_call_language() -> None:
    from tests.ui.apps.action_app import make_action

    action = make_action(confirm={"methods": ["button", "voice"], "voice": {"keyword": "odeslat"}})
    assert consent_phrase(action, "cs") == ("ano, odeslat", "ne")
    assert consent_phrase(action, "cs-CZ") == ("ano, odeslat", "ne")
    assert consent_phrase(make_action(), "en") == ("yes", "no")


def test_snapshot_voice_bar_states(snap_compare: Any) -> None:
    assert snap_compare(VoiceBarsApp(), terminal_size=(80, 40))


def test_snapshot_chat_with_the_voice_bar_waiting_for_consent(
    snap_compare: Any, tmp_path: Path
) -> None:
    """The chat screen in a call: spoken turns marked, the bar counting down the consent."""
    app = fixed_app(tmp_path)

    async def run_before(pilot: Pilot[None]) -> None:
        screen = await ask(pilot, "Show me Alfa")
        conversation = screen.session.conversation
        conversation.add_spoken("user", "item_1", "Pošli mu nabídku.")
        conversation.add_spoken(
            "assistant", "item_2", "Nabídka je připravená. Řekněte „ano, odeslat“, nebo „ne“."
        )
        screen.transcript.sync_turns()
        await screen.query_one("#main").mount(fixed_bar("consent"), before=screen.composer)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
