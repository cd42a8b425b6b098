"""The deterministic test-mode scripts (`minara-test:*` messages, the contract's table)."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.common.long_answer import markdown_agent
from talkie_tui.devserver.minara.credentials import endpoint_for
from talkie_tui.devserver.minara.turn_context import Agent, TurnContext

PREFIX = "minara-test:"
ECHO = f"{PREFIX}echo"
VERSION2 = f"{PREFIX}version2"
MARKDOWN = f"{PREFIX}markdown"
MARKDOWN_USAGE = f"`{MARKDOWN} <tokens> <tokens per second, 0: unpaced> <seed>`"
DEFAULT_QUESTION_SECONDS = 30.0
SLOW_DELTAS = 20
ENDLESS_LIMIT = 3000  # ten minutes at 200 ms: a forgotten turn still ends
HUGE_BYTES = 1024 * 1024 + 4096
TEST_SECRET = "test_api_key"  # noqa: S105 - the name of a credential, not one
ACCOUNTS = ["Salary", "Savings", "Travel"]


def thirds(text: str) -> list[str]:
    """Text in three pieces (some empty for a very short text) that join back to it."""
    first, second = len(text) // 3, 2 * len(text) // 3
    return [text[:first], text[first:second], text[second:]]


def _echo(text: str) -> Agent:
    async def echo(ctx: TurnContext) -> None:
        await ctx.say(text, pieces=thirds(text), delay=0)

    return echo


def _count(count: int, pause_ms: int) -> Agent:
    async def counting(ctx: TurnContext) -> None:
        for number in range(1, count + 1):
            if number > 1:
                await ctx.sleep(pause_ms / 1000)
            ctx.delta(f"{number} ")

    return counting


async def _tools(ctx: TurnContext) -> None:
    args = {"symbols": ["BTC", "ETH"]}
    ctx.tool_start("lookup", label="Looking up prices", args=args, call_id="t1")
    ctx.tool_start("lookup", label="Looking up prices", args=args, call_id="t1")
    ctx.tool_end("t1", ok=True, summary="BTC 64,000 USD, ETH 3,200 USD")
    ctx.tool_start(
        "swap_quote",
        label="Getting a swap quote",
        args={"from": "USDC", "to": "ETH", "amount": 100},
        call_id="t2",
    )
    ctx.tool_end("t2", ok=False, error="Quote expired")
    ctx.delta("Tools done.")


async def _blocks(ctx: TurnContext) -> None:
    ctx.delta("Here is one block of each kind.")
    ctx.block({"kind": "markdown", "text": "**Bold** and a list:\n\n- one\n- two"})
    ctx.block(
        {
            "kind": "table",
            "columns": ["Asset", "Amount", "Value"],
            "rows": [
                ["BTC", "0.5", "32,000 USD"],
                ["ETH", "4", "12,800 USD"],
                ["SOL", "20", "3,000 USD"],
                ["USDC", "1,000", "1,000 USD"],
            ],
        }
    )
    ctx.block(
        {
            "kind": "kv",
            "items": [
                {"label": "Total", "value": "48,800 USD"},
                {"label": "24 h", "value": "+1.2 %"},
                {"label": "Assets", "value": "4"},
            ],
        }
    )
    ctx.block({"kind": "link", "label": "Documentation", "url": "https://example.com/docs"})
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    ctx.block(
        {
            "kind": "chart",
            "title": "Prices this week",
            "series": [
                {"label": "BTC", "points": [[day, 60 + i] for i, day in enumerate(days)]},
                {"label": "ETH", "points": [[day, 30 - i] for i, day in enumerate(days)]},
            ],
        }
    )
    ctx.block({"kind": "map", "center": [50.08, 14.42], "fallback_text": "A map of Prague."})
    ctx.block({"kind": "hologram", "frames": 3})


async def _todos(ctx: TurnContext) -> None:
    items = ["Check balances", "Compare prices", "Write the summary"]
    ctx.todos([(item, False) for item in items])
    ctx.delta("Working through the list.")
    ctx.todos([(item, index == 0) for index, item in enumerate(items)])
    ctx.todos([(item, True) for item in items])


def _question(kind: str, seconds: float) -> Agent:
    questions: list[dict[str, Any]]
    wire_kind, endpoint = kind, None
    options = [{"label": label, "description": f"The {label} account"} for label in ACCOUNTS]
    if kind == "select":
        questions = [{"text": "Which account?", "options": options, "multi": False}]
    elif kind == "multi":
        wire_kind = "select"
        questions = [{"text": "Which accounts?", "options": options, "multi": True}]
    elif kind == "confirm":
        questions = [
            {
                "text": "Run the test action?",
                "options": [
                    {"label": "Confirm", "description": "Run it"},
                    {"label": "Cancel", "description": "Do nothing"},
                ],
            }
        ]
    elif kind == "input":
        questions = [{"text": "What name?", "placeholder": "A name"}]
    else:
        endpoint = endpoint_for(TEST_SECRET)
        questions = [{"text": "Paste the test API key.", "placeholder": "API key"}]

    async def asking(ctx: TurnContext) -> None:
        ctx.delta("Asking.")
        answers = await ctx.ask(
            wire_kind,
            questions,
            asked_by={"agent": "tester", "tool": "question"},
            seconds=seconds,
            write_endpoint=endpoint,
        )
        if answers is None:
            ctx.delta("No answer: timed out.")
            if kind == "confirm":
                ctx.delta(" The action is cancelled.")
            return
        ctx.delta(f"Answer: {answers[0].text}")

    return asking


async def _slow(ctx: TurnContext) -> None:
    # Interjections are taken in during the first two thirds of the turn.
    window = SLOW_DELTAS * 2 // 3 + 1
    ctx.open_interjections()
    for index in range(SLOW_DELTAS):
        if index:
            await ctx.sleep(ctx.config.slow_delay)
        if index == window:
            ctx.close_interjections()
        ctx.delta(f"part {index + 1} ")
    ctx.close_interjections()


async def _error(ctx: TurnContext) -> None:
    ctx.delta("Partial.")
    ctx.fail("agent_failed", "The agent failed on purpose.", retryable=True)


async def _endless(ctx: TurnContext) -> None:
    for number in range(1, ENDLESS_LIMIT + 1):
        ctx.delta(f"tick {number} ")
        await ctx.sleep(ctx.config.endless_interval)


async def _version2(ctx: TurnContext) -> None:
    ctx.delta("This turn announced protocol version 2.")


async def _unknown(ctx: TurnContext) -> None:
    ctx.delta("a")
    ctx.emit("reasoning_delta", {"text": "thinking about b"})
    ctx.emit("text_delta", {"text": "b", "lang": "en", "confidence": 0.9})
    ctx.emit("future_event", {"nested": {"anything": [1, 2, 3]}})
    ctx.delta("c")


async def _huge(ctx: TurnContext) -> None:
    unit = "0123456789abcdef" * 4 + "\n"
    ctx.delta(unit * (HUGE_BYTES // len(unit) + 1))
    ctx.delta("after")


def _markdown(arguments: str) -> Agent:
    """The seeded long Markdown answer of the Talkie server's `talkie-test:markdown`, a token
    (CHARS_PER_TOKEN characters) per `text_delta` at a fixed rate; its usage for bad arguments."""

    async def usage(ctx: TurnContext) -> None:
        ctx.delta(f"Usage: {MARKDOWN_USAGE}.")

    return markdown_agent(arguments, usage)


def _unknown_command(command: str) -> Agent:
    async def unknown(ctx: TurnContext) -> None:
        ctx.delta(
            f"Unknown test message `{command}`. Known: echo TEXT, count N [MS], tools, blocks, "
            "todos, question KIND [SECONDS], slow, error, endless, version2, unknown, huge, "
            "markdown TOKENS RATE SEED."
        )

    return unknown


SCRIPTS: dict[str, Agent] = {
    "tools": _tools,
    "blocks": _blocks,
    "todos": _todos,
    "slow": _slow,
    "error": _error,
    "endless": _endless,
    "version2": _version2,
    "unknown": _unknown,
    "huge": _huge,
}
QUESTION_KINDS = ("select", "multi", "confirm", "input", "secret")


def script_for(message: str) -> Agent | None:
    """The script of a test-mode message, or None when it is not one."""
    if not message.startswith(PREFIX):
        return None
    if message == ECHO or message.startswith(f"{ECHO} "):
        # Everything after the first space is echoed verbatim, whitespace included.
        return _echo(message[len(ECHO) + 1 :])
    if message == MARKDOWN or message.startswith(f"{MARKDOWN} "):
        return _markdown(message[len(MARKDOWN) + 1 :])
    words = message[len(PREFIX) :].split(" ")
    command, args = words[0], words[1:]
    if command in SCRIPTS and not args:
        return SCRIPTS[command]
    if command == "count":
        return _count_script(args) or _unknown_command(message)
    if command == "question" and args and args[0] in QUESTION_KINDS:
        return _question_script(args) or _unknown_command(message)
    return _unknown_command(message)


def _count_script(args: list[str]) -> Agent | None:
    if not 1 <= len(args) <= 2 or not all(arg.isdigit() for arg in args):
        return None
    count, pause = int(args[0]), int(args[1]) if len(args) == 2 else 0
    if count > 100_000 or pause > 60_000:
        return None
    return _count(count, pause)


def _question_script(args: list[str]) -> Agent | None:
    if len(args) > 2:
        return None
    seconds = DEFAULT_QUESTION_SECONDS
    if len(args) == 2:
        try:
            seconds = float(args[1])
        except ValueError:
            return None
        if not 0 < seconds <= 3600:
            return None
    return _question(args[0], seconds)
