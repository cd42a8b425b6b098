"""The single development user and their daily usage counters."""

from __future__ import annotations

import math
from typing import Any

from talkie_tui.devserver.common import clock
from talkie_tui.devserver.talkie.storage import Storage

DEV_USER: dict[str, str] = {
    "id": "u1",
    "name": "Jana Nováková",
    "email": "jana.novakova@example.com",
}

TOKENS_PER_DAY = 400_000
RUNS_PER_DAY = 500
VOICE_MINUTES_PER_DAY = 60


def usage_items(storage: Storage, user_id: str, *, voice: bool = False) -> list[dict[str, Any]]:
    """The status `usage` list, counted from today's runs (and voice sessions, with voice)."""
    today = clock.iso(clock.start_of_today())
    runs, tokens = storage.usage_since(user_id, today)
    items: list[dict[str, Any]] = [
        {"label": "Tokens today", "used": tokens, "limit": TOKENS_PER_DAY, "unit": "tokens"},
        {"label": "Runs today", "used": runs, "limit": RUNS_PER_DAY, "unit": "runs"},
    ]
    if voice:
        minutes = math.ceil(storage.voice_seconds_since(user_id, today) / 60)
        items.append(
            {
                "label": "Voice today",
                "used": minutes,
                "limit": VOICE_MINUTES_PER_DAY,
                "unit": "minutes",
            }
        )
    return items


def estimate_tokens(*texts: str) -> int:
    """A rough token count (≈ 4 characters per token), enough for a usage meter."""
    return max(1, sum(len(text) for text in texts) // 4)
