"""A deterministic long Markdown answer for streaming benchmarks (`talkie-test:markdown` of the
reference Talkie server, `minara-test:markdown` of the reference Minara gateway).

The same (tokens, seed) always gives the same text: headings, paragraphs with bold and inline
code, nested lists, numbered lists, quotes and fenced code blocks, exactly `tokens` tokens of
CHARS_PER_TOKEN characters, ending with a line that names the seed (`end_line`), so a screen
can be checked for the end of the answer.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_TOKENS",
    "digest",
    "end_line",
    "long_answer",
    "parse_request",
    "tokens_of",
]

CHARS_PER_TOKEN = 4
MAX_TOKENS = 200_000
"""The longest answer a test mode streams (800,000 characters)."""

_WORDS = [
    "account",
    "balance",
    "budget",
    "client",
    "contract",
    "cost",
    "delivery",
    "estimate",
    "forecast",
    "growth",
    "invoice",
    "ledger",
    "margin",
    "market",
    "order",
    "pipeline",
    "plan",
    "price",
    "quarter",
    "region",
    "report",
    "revenue",
    "review",
    "risk",
    "sales",
    "schedule",
    "segment",
    "service",
    "supplier",
    "target",
    "team",
    "trend",
    "update",
    "volume",
    "warehouse",
    "week",
    "the",
    "a",
    "of",
    "and",
    "to",
    "in",
    "for",
    "with",
    "on",
    "by",
    "from",
    "that",
    "this",
    "each",
    "every",
    "next",
    "last",
    "most",
    "more",
    "less",
]
_TERMS = ["pipeline_id", "quarter_end", "net_margin", "order_count", "region_code", "forecast_v2"]
_LANGS = ("python", "sql", "sh", "")


def end_line(seed: int) -> str:
    """The answer's last line (what a screen shows once the whole answer arrived)."""
    return f"End of the benchmark answer, seed {seed}."


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 16))]
    if rng.random() < 0.4:
        at = rng.randrange(len(words))
        words[at] = f"**{words[at]}**"
    if rng.random() < 0.3:
        at = rng.randrange(len(words))
        words[at] = f"`{rng.choice(_TERMS)}`"
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 5))) + "\n\n"


def _nested_list(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(2, 4)):
        lines.append(f"- {_sentence(rng)}")
        for _ in range(rng.randint(0, 3)):
            lines.append(f"  - {_sentence(rng)}")
            for _ in range(rng.randint(0, 2)):
                lines.append(f"    - **{rng.choice(_WORDS)}**: {_sentence(rng)}")
    return "\n".join(lines) + "\n\n"


def _numbered(rng: random.Random) -> str:
    count = rng.randint(2, 5)
    return "\n".join(f"{n}. {_sentence(rng)}" for n in range(1, count + 1)) + "\n\n"


def _code(rng: random.Random) -> str:
    lang = rng.choice(_LANGS)
    body = []
    for n in range(rng.randint(3, 9)):
        term = rng.choice(_TERMS)
        indent = "    " * (n % 3 != 0)
        body.append(f"{indent}{term} = compute('{rng.choice(_WORDS)}', {rng.randint(1, 999)})")
    return f"```{lang}\n" + "\n".join(body) + "\n```\n\n"


def _quote(rng: random.Random) -> str:
    return f"> {_sentence(rng)} {_sentence(rng)}\n\n"


def _section(rng: random.Random, number: int) -> str:
    level = "##" if number % 3 == 1 else "###"
    title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 5))).title()
    parts = [f"{level} {number}. {title}\n\n", _paragraph(rng)]
    for _ in range(rng.randint(1, 3)):
        parts.append(rng.choice((_paragraph, _nested_list, _numbered, _code, _quote))(rng))
    return "".join(parts)


def long_answer(tokens: int, seed: int) -> str:
    """`tokens` * CHARS_PER_TOKEN characters of Markdown, the same for the same arguments."""
    rng = random.Random(seed)  # noqa: S311 (a benchmark's text, not a secret)
    size = tokens * CHARS_PER_TOKEN
    end = f"{end_line(seed)}\n"
    head = f"# Benchmark answer {seed}\n\n"
    parts = [head]
    used = len(head) + len(end)
    number = 1
    while True:
        section = _section(rng, number)
        if used + len(section) > size:
            break
        parts.append(section)
        used += len(section)
        number += 1
    # Fill the rest with a paragraph of exactly the missing length (a single "x" run at worst).
    missing = size - used
    if missing >= 2:
        filler = _paragraph(rng) * (missing // 40 + 1)
        parts.append(filler[: missing - 2].rstrip().ljust(missing - 2, "x") + "\n\n")
    elif missing == 1:
        parts.append("\n")
    return "".join(parts) + end if size >= used else end


def tokens_of(text: str) -> list[str]:
    """The text as the deltas it is streamed in."""
    return [text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]


def parse_request(arguments: str) -> tuple[int, int, int] | None:
    """`TOKENS RATE SEED` of a test-mode `markdown` message as integers, or None when they are
    not three integers, TOKENS is not in 1..MAX_TOKENS or RATE (tokens/s, 0: unpaced) is negative.
    """
    try:
        tokens, rate, seed = (int(value) for value in arguments.split())
    except ValueError:
        return None
    if not 0 < tokens <= MAX_TOKENS or rate < 0:
        return None
    return tokens, rate, seed


def digest(text: str) -> str:
    """A short fingerprint of an answer (printed by the benchmark)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SaysPaced(Protocol):
    """A test-mode agent's context that streams pieces of text at a rate."""

    async def say_paced(self, pieces: list[str], rate: float) -> None:
        """A delta per piece, piece `i` due `i / rate` s after the first (0: unpaced)."""


Context = TypeVar("Context", bound=SaysPaced)


def markdown_agent(
    arguments: str, usage: Callable[[Context], Awaitable[None]]
) -> Callable[[Context], Awaitable[None]]:
    """The agent that streams the long answer `arguments` ask for, a token per delta at their
    rate; `usage` (which says how to ask) when they are not `TOKENS RATE SEED`."""
    request = parse_request(arguments)
    if request is None:
        return usage
    tokens, rate, seed = request

    async def markdown(ctx: Context) -> None:
        await ctx.say_paced(tokens_of(long_answer(tokens, seed)), rate)

    return markdown
