"""Pieces of the WebRTC peer that need no call."""

from __future__ import annotations

import importlib

import av
import numpy as np
import pytest

from talkie_tui.voice.rtc import audio_level_dbov


def _frame(samples: np.ndarray) -> av.AudioFrame:
    frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
    frame.sample_rate = 48000
    return frame


@pytest.mark.parametrize(
    "samples",
    [
        np.zeros(960, np.int16),
        np.full(960, 32767, np.int16),
        np.full(960, -32768, np.int16),
        (np.sin(np.arange(960) / 7) * 3000).astype(np.int16),
        np.random.default_rng(1).integers(-200, 200, 960).astype(np.int16),
        np.array([1] + [0] * 959, np.int16),
    ],
)
def test_the_fast_audio_level_equals_aiortcs(samples: np.ndarray) -> None:
    original = importlib.reload(importlib.import_module("aiortc.rtp")).compute_audio_level_dbov
    try:
        assert audio_level_dbov(_frame(samples)) == original(_frame(samples))
    finally:
        import aiortc.rtp

        aiortc.rtp.compute_audio_level_dbov = audio_level_dbov
