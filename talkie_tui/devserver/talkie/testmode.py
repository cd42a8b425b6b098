"""The deterministic §11 test-mode scripts (`talkie-test:*` messages)."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.common.long_answer import (
    MAX_TOKENS,
    markdown_agent,
    tokens_of,
)
from talkie_tui.devserver.talkie import cards
from talkie_tui.devserver.talkie.actions import ActionKind, ActionResult
from talkie_tui.devserver.talkie.run_context import Agent, RunContext, split_text

PREFIX = "talkie-test:"
ECHO = f"{PREFIX}echo"
SLOW_TEXT = (
    "This is a deliberately slow answer. It arrives a few words at a time, spread over several "
    "seconds, so that cancelling and disconnecting can be tested while it is still streaming."
)
SLOW_PIECES = 20
MARKDOWN = f"{PREFIX}markdown"
MARKDOWN_USAGE = f"`{MARKDOWN} <tokens> <tokens per second, 0: unpaced> <seed>`"
MAX_MARKDOWN_TOKENS = MAX_TOKENS
CODE = f"{PREFIX}code"
CODE_USAGE = f"`{CODE} <lines>`"
MAX_CODE_LINES = 20_000


def code_answer(lines: int) -> str:
    """A sentence, one fenced Python block of `lines` numbered lines (a blank line after every
    tenth) and a sentence: longer than a Cuckoo message (8000 characters) from about 250 lines,
    with no paragraph break outside the block after the first sentence, so that the Cuckoo
    bridge must end a message inside the block."""
    body = "".join(
        f"total_{n} = compute('line {n}', {n})\n" + ("\n" if n % 10 == 9 else "")
        for n in range(lines)
    )
    return f"The code, in one block:\n\n```python\n{body}```\n\nThat is the whole block.\n"


def _echo(text: str) -> Agent:
    async def echo(ctx: RunContext) -> None:
        await ctx.say(text, delay=0, pieces=split_text(text, words_per_piece=2))

    return echo


async def _card(ctx: RunContext) -> None:
    async with ctx.tool("lookup_record", "Looking up the record…", args={"record": "TEST-0001"}):
        await ctx.sleep(0)
    ctx.card(
        cards.card(
            "Test Company s.r.o.",
            [
                cards.fields(
                    ("Record", "TEST-0001"),
                    ("City", "Brno"),
                    ("Status", "Active"),
                )
            ],
            "Test Company s.r.o. – record TEST-0001, Brno, active",
            subtitle="Conformance fixture",
            a11y_label="Record card of Test Company s.r.o.",
        )
    )
    await ctx.say("Here is the test record.", delay=0)


async def _action(ctx: RunContext) -> None:
    await ctx.propose(
        kind="test_mark_checked",
        tool_name="mark_checked",
        label="Preparing the test action…",
        summary="Mark test record TEST-0001 as checked",
        params={"record": "TEST-0001", "mark": "checked"},
    )
    await ctx.say("Please confirm the test action.", delay=0)


async def _error(ctx: RunContext) -> None:
    ctx.fail("The model provider is unavailable (test mode).", "upstream_unavailable")


async def _slow(ctx: RunContext) -> None:
    pieces = split_text(SLOW_TEXT, words_per_piece=2)
    # Merge into SLOW_PIECES roughly equal deltas so the pause between them is predictable.
    step = -(-len(pieces) // SLOW_PIECES)
    merged = ["".join(pieces[index : index + step]) for index in range(0, len(pieces), step)]
    await ctx.say(SLOW_TEXT, delay=ctx.config.slow_seconds / len(merged), pieces=merged)


def _markdown(arguments: str) -> Agent:
    """A seeded long Markdown answer, streamed a token at a time at a fixed rate."""

    async def usage(ctx: RunContext) -> None:
        await ctx.say(f"Usage: {MARKDOWN_USAGE}.", delay=0)

    return markdown_agent(arguments, usage)


def _code(arguments: str) -> Agent:
    """`code_answer(LINES)`, streamed unpaced in tokens of four characters."""
    try:
        lines = int(arguments)
    except ValueError:
        lines = 0
    if not 0 < lines <= MAX_CODE_LINES:

        async def usage(ctx: RunContext) -> None:
            await ctx.say(f"Usage: {CODE_USAGE}, at most {MAX_CODE_LINES} lines.", delay=0)

        return usage

    async def code(ctx: RunContext) -> None:
        await ctx.say_paced(tokens_of(code_answer(lines)), 0)

    return code


def _unknown(command: str) -> Agent:
    async def unknown(ctx: RunContext) -> None:
        await ctx.say(
            f"Unknown test command `{command}`. Known: `echo <text>`, `card`, `action`, "
            f"`error`, `slow`, {MARKDOWN_USAGE}, {CODE_USAGE}.",
            delay=0,
        )

    return unknown


SCRIPTS: dict[str, Agent] = {
    f"{PREFIX}card": _card,
    f"{PREFIX}action": _action,
    f"{PREFIX}error": _error,
    f"{PREFIX}slow": _slow,
}


def script_for(message: str) -> Agent | None:
    """The script for a test-mode message, or None when it is not one."""
    if not message.startswith(PREFIX):
        return None
    if message == ECHO or message.startswith(f"{ECHO} "):
        # Everything after the first space is echoed verbatim, whitespace included.
        return _echo(message[len(ECHO) + 1 :])
    if message.startswith(f"{MARKDOWN} "):
        return _markdown(message[len(MARKDOWN) + 1 :])
    if message.startswith(f"{CODE} "):
        return _code(message[len(CODE) + 1 :])
    command = message.strip()
    return SCRIPTS.get(command) or _unknown(command)


def _mark_checked(params: dict[str, Any], czech: bool) -> ActionResult:
    card = cards.card(
        "Test action done",
        [cards.fields(("Record", str(params["record"])), ("Mark", str(params["mark"])))],
        f"Test action done: {params['record']} marked as {params['mark']}",
    )
    return ActionResult(card)


ACTION_KINDS: dict[str, ActionKind] = {
    "test_mark_checked": ActionKind("test_mark_checked", "low", _mark_checked),
}
