"""`talkie devices`: the audio inputs and outputs voice calls can use."""

from __future__ import annotations

import sys
from typing import TextIO

from talkie_tui.core.exit_codes import ExitCode
from talkie_tui.core.sanitize import clean_text

__all__ = ["list_audio_devices"]

_NO_DEVICES = """\
talkie: no audio devices found, so voice calls are off (chat works as usual).
  Check that a microphone or headset is connected and that the sound server runs
  (PulseAudio or PipeWire: `pactl info`); on a machine without sound hardware nothing is found."""


def list_audio_devices(out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Print the input and output devices, defaults marked; 1 when there is no audio at all."""
    out = out or sys.stdout
    err = err or sys.stderr
    # Imported here: numpy and PortAudio load only for this command (docs/ARCHITECTURE.md).
    from talkie_tui.voice.audio import AudioUnavailable, list_devices, portaudio_version

    try:
        devices = list_devices()
        version = portaudio_version()
    except AudioUnavailable as error:
        print(f"talkie: audio unavailable: {error.reason}", file=err)
        print("  Voice calls are off until this is fixed; chat works as usual.", file=err)
        return ExitCode.FAILED
    if not devices:
        print(_NO_DEVICES, file=err)
        return ExitCode.FAILED
    width = max(len(clean_text(device.name)) for device in devices)
    for title, kind in (("Inputs (microphones)", "input"), ("Outputs (speakers)", "output")):
        chosen = [d for d in devices if (d.is_input if kind == "input" else d.is_output)]
        print(f"{title}:", file=out)
        if not chosen:
            print("  (none)", file=out)
        for device in chosen:
            default = device.default_input if kind == "input" else device.default_output
            channels = device.input_channels if kind == "input" else device.output_channels
            print(
                f"  {'*' if default else ' '} {device.index:>3}  "
                f"{clean_text(device.name):<{width}}  {clean_text(device.host_api)}, "
                f"{channels} ch",
                file=out,
            )
    print("* marks the default. To use another, set audio_input or audio_output", file=out)
    print("  in config.toml to its name or number.", file=out)
    print(clean_text(version), file=out)
    return ExitCode.OK
