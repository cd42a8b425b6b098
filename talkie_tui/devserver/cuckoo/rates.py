"""Token buckets per sender: `take` says how long to wait when a bucket is empty."""

from __future__ import annotations

import time


class RateLimiter:
    """Buckets by (what, who), each `rate` tokens a second up to `burst`."""

    def __init__(self) -> None:
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}

    def take(self, what: str, who: str, rate_burst: tuple[float, int]) -> float:
        """Take one token: 0.0 when allowed, else the seconds until one is free."""
        rate, burst = rate_burst
        now = time.monotonic()
        tokens, last = self._buckets.get((what, who), (float(burst), now))
        tokens = min(float(burst), tokens + (now - last) * rate)
        if tokens < 1.0:
            self._buckets[(what, who)] = (tokens, now)
            return (1.0 - tokens) / rate
        self._buckets[(what, who)] = (tokens - 1.0, now)
        return 0.0
