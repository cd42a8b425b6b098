"""A voice call on 127.0.0.1: CPU of the client process, and the microphone-to-provider delay.

The reference server with its fake realtime provider runs in a separate process (`talkie serve
--fake-voice`), so this process is only the client: `VoiceCall`, aiortc (Opus encode and
decode, SRTP, ICE), the paced microphone and the playing speaker. The call is hands-free (the
provider's voice detection on), the provider answers by speaking, and a 300 ms tone goes into
the microphone every 3 s.

Delay: from the moment a tone enters the microphone to the moment the provider notices it. The
provider reports that as `input_audio_buffer.speech_started`, after it has heard DETECT_MS of
loud audio, and sends the event back over the data channel (well under a millisecond here); the
DETECT_MS are subtracted, so the figure is the path itself: the microphone's buffer, pacing,
Opus encode, RTP, the provider's jitter buffer and decode. Prints one JSON line; targets: under
15 % of one core, under 150 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from talkie_tui.core.tokens import StaticToken
from talkie_tui.protocol.talkie.client import TalkieClient
from talkie_tui.voice.call import VoiceCall
from talkie_tui.voice.call_updates import CallUpdate, TalkMode
from talkie_tui.voice.memory_audio import RecordingSpeaker, ScriptedMicrophone
from talkie_tui.voice.realtime import RealtimeEvent, SpeechStarted
from talkie_tui.voice.sound import SAMPLE_RATE

TOKEN = "bench-token"
DETECT_MS = 60.0  # the fake provider calls it speech after 60 ms of loud audio
TONE_SECONDS = 0.3
TONE_EVERY = 3.0


def start_server() -> tuple[subprocess.Popen[str], str]:
    """`talkie serve --test-mode --fake-voice` on a free port; its URL."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "talkie_tui.cli",
            "serve",
            "--test-mode",
            "--fake-voice",
            "--dev-token",
            TOKEN,
            "--db",
            str(Path(tempfile.mkdtemp(prefix="talkie-bench-")) / "voice.sqlite3"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise SystemExit(f"the reference server did not start: {url!r}")
    return process, url


# The in-memory microphone and speaker keep time with their own threads; with real devices that
# is PortAudio's work (in C), so their share is reported apart.
TEST_AUDIO_THREADS = ("talkie-scripted-mic", "talkie-recording-speaker")


def thread_cpu() -> dict[str, float]:
    """CPU seconds per live thread of this process, by thread name (Linux /proc)."""
    names = {str(t.native_id): t.name for t in threading.enumerate()}
    seconds: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(tid, tid)
        seconds[name] = seconds.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return seconds


def tone() -> np.ndarray:
    """A loud 300 ms tone at 1 kHz."""
    t = np.arange(int(TONE_SECONDS * SAMPLE_RATE)) / SAMPLE_RATE
    return (np.sin(2 * np.pi * 1000 * t) * 0.3 * 32767).astype(np.int16)


async def measure(url: str, seconds: float, mode: TalkMode) -> dict[str, Any]:
    """One call of `seconds`; the figures."""
    client = await TalkieClient.connect(url, tokens=StaticToken(TOKEN))
    microphone = ScriptedMicrophone()
    speaker = RecordingSpeaker()
    updates: list[CallUpdate] = []
    call = VoiceCall(
        client,
        microphone=microphone,
        speaker=speaker,
        listener=updates.append,
        locale="en",
        mode=mode,
        allow_http_signaling=True,
    )
    await call.start()
    assert call.peer is not None
    detected: list[float] = []
    handler = call.peer._on_event

    def on_event(event: RealtimeEvent) -> None:
        if isinstance(event, SpeechStarted):
            detected.append(time.monotonic())
        handler(event)

    call.peer._on_event = on_event
    fed: list[float] = []
    cpu_start, wall_start = time.process_time(), time.monotonic()
    threads_start = thread_cpu()
    while time.monotonic() - wall_start < seconds:
        # The tone enters the microphone now: from here on, every buffer on the way counts.
        fed.append(time.monotonic())
        if mode == "push_to_talk":
            call.press()
        microphone.say(tone())
        if mode == "push_to_talk":
            await microphone.said()
            call.release()
        await asyncio.sleep(TONE_EVERY - (time.monotonic() - fed[-1]))
    cpu = time.process_time() - cpu_start
    wall = time.monotonic() - wall_start
    threads_end = thread_cpu()
    test_audio = sum(
        threads_end.get(name, 0.0) - threads_start.get(name, 0.0) for name in TEST_AUDIO_THREADS
    )
    await call.hang_up()
    await client.aclose()

    delays = []
    for sent in fed:
        after = [d for d in detected if d > sent]
        if after:
            delays.append((after[0] - sent) * 1000 - DETECT_MS)
    return {
        "mode": mode,
        "seconds": round(wall, 1),
        "client_cpu_percent_of_one_core": round(100 * cpu / wall, 1),
        "of_which_test_audio_threads_percent": round(100 * test_audio / wall, 1),
        "tones": len(fed),
        "detected": len(delays),
        "delay_ms_median": round(statistics.median(delays), 1) if delays else None,
        "delay_ms_max": round(max(delays), 1) if delays else None,
        "played_seconds": round(len(speaker.recording()) / SAMPLE_RATE, 1),
    }


def main() -> None:
    """Parse options, run the call, print one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--mode",
        choices=["hands_free", "push_to_talk", "both"],
        default="both",
        help="hands_free measures the delay too (push-to-talk has no voice detection)",
    )
    args = parser.parse_args()
    modes: list[TalkMode] = ["hands_free", "push_to_talk"] if args.mode == "both" else [args.mode]
    process, url = start_server()
    try:
        for mode in modes:
            figures = asyncio.run(measure(url, args.seconds, mode))
            figures.update(benchmark="voice_call", target_cpu_percent=15, target_delay_ms=150)
            print(json.dumps(figures), flush=True)
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
