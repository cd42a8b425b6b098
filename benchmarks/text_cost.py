"""What hostile or ordinary text costs to clean and to classify, in milliseconds.

The tests check that these stay linear (tests/protocol/test_sanitize.py, tests/voice/
test_consent.py) by what they return, never by the clock; the figures are here:

- `clean_text` on a megabyte of unterminated escape introducers (a quadratic cleaner takes
  minutes);
- the spoken-consent classifier on megabytes (refused by length alone), just under its
  character cap (every regex runs), and on ordinary short utterances (calls per second).

Prints one JSON line per measurement (the best of `--repeat` runs, so a busy moment of the
machine does not count), then a summary line with the load average.

    .venv/bin/python benchmarks/text_cost.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from functools import partial

from talkie_tui.core.sanitize import clean_text
from talkie_tui.voice.consent_classifier import MAX_CHARS, classify

DIRTY = {
    "c1-dcs": "\x90" * 1_000_000,
    "c1-csi": "\x9b" * 1_000_000,
    "esc-osc": "\x1b]" * 500_000,
    "osc-unterminated": "\x1b]" + "a" * 1_000_000,
    "csi-params": "\x1b[" + "1" * 1_000_000,
    "mixed": "\x1b]\x1bP\x9b1\x9d\x90\x1b[;\x1b( a" * 70_000,
}

HUGE = {
    "many-words": "ano " * 500_000,
    "one-huge-word": "a" * 2_000_000,
    "accents": "ř" * 1_000_000,
    "czech-li": "je-li" * 400_000,
}

ORDINARY = [
    "ano",
    "Ano, odeslat.",
    "ne, nechci",
    "yes please",
    "no, cancel that",
    "hmm, maybe later",
    "jestli chceš, tak ano",
    "is it ready?",
    "OK, send it",
    "don't",
]


def best_ms(call: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` runs of `call`, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    for name, dirty in DIRTY.items():
        ms = best_ms(partial(clean_text, dirty), args.repeat)
        print(
            json.dumps(
                {"what": "clean_text", "input": name, "chars": len(dirty), "ms": round(ms, 1)}
            )
        )

    for name, text in HUGE.items():
        ms = best_ms(partial(classify, text, keyword="odeslat"), args.repeat)
        print(json.dumps({"what": "classify_too_long", "input": name, "ms": round(ms, 4)}))
        under = text[: MAX_CHARS - 4] + " ano"
        ms = best_ms(partial(classify, under, keyword=None), args.repeat)
        print(json.dumps({"what": "classify_at_cap", "input": name, "ms": round(ms, 3)}))

    rounds = 2000
    ms = best_ms(
        lambda: [classify(text, keyword=None) for _ in range(rounds) for text in ORDINARY],
        args.repeat,
    )
    calls = rounds * len(ORDINARY)
    per_second = round(calls / ms * 1000)
    print(json.dumps({"what": "classify_ordinary", "calls": calls, "per_second": per_second}))
    print(json.dumps({"summary": "text_cost", "loadavg": os.getloadavg()}))


if __name__ == "__main__":
    main()
