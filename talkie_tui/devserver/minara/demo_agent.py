"""The scripted demo agent: a crypto-portfolio assistant over the sample data of `demo_data`.

Each request shows one group of events: tables, charts and key-value blocks with a tool call
(`portfolio`), Markdown, a link and a block of a kind newer than this client with its
`fallback_text` (`market summary`), a quote then a fund-moving confirmation (`swap 100 USDC to
ETH`), a secret (`connect my exchange`), a choice of one (`which account`), a choice of several
(`set price alerts`), typed input (`name my watchlist`), todos updated in place (`plan my
week`) and a slow turn that takes interjections (`research X`). Answers are deterministic: no
randomness, no clock in the text.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from talkie_tui.devserver.minara import demo_data as data
from talkie_tui.devserver.minara.credentials import endpoint_for
from talkie_tui.devserver.minara.turn_context import TurnContext

Handler = Callable[[TurnContext, str], Awaitable[None]]

_SWAP = re.compile(
    r"\bswap\s+(\d+(?:\.\d+)?)\s+([a-z]+)\s+(?:to|for|into)\s+([a-z]+)\b", re.IGNORECASE
)
_RESEARCH = re.compile(r"^\s*research\s+(.+?)\s*[?.!]*\s*$", re.IGNORECASE | re.DOTALL)
EXCHANGE_SECRET = "exchange_api_key"  # noqa: S105 - the name of a credential, not one
WATCHLIST_MAX = 60
HELP = (
    "I'm the Minara demo agent, working on a sample crypto portfolio. Try: “portfolio”, "
    "“market summary”, “swap 100 USDC to ETH”, “set price alerts”, “connect my exchange”, "
    "“which account”, “name my watchlist”, “plan my week”, or “research Solana”."
)


async def _portfolio(ctx: TurnContext, text: str) -> None:
    total = data.total_value()
    change = sum(h.value_usd * h.change_24h / 100 for h in data.HOLDINGS) / total * 100
    args = {"account": "Main"}
    pause = ctx.config.demo_delay
    async with ctx.tool("get_portfolio", "Reading your portfolio", args, seconds=pause) as call:
        call.summary = f"{len(data.HOLDINGS)} assets, {data.usd(total)}"
    await ctx.say(f"Your portfolio is worth {data.usd(total)}, {change:+.1f} % in 24 hours.\n")
    ctx.block(
        {
            "kind": "table",
            "columns": ["Asset", "Amount", "Price", "Value", "24 h"],
            "rows": [
                [
                    f"{h.name} ({h.symbol})",
                    data.amount_text(h.amount),
                    data.usd(h.price_usd),
                    data.usd(h.value_usd),
                    f"{h.change_24h:+.1f} %",
                ]
                for h in data.HOLDINGS
            ],
        }
    )
    ctx.block(
        {
            "kind": "chart",
            "title": "Portfolio value, last 7 days (USD)",
            "series": [{"label": "Value", "points": [[day, value] for day, value in data.WEEK]}],
        }
    )
    largest = max(data.HOLDINGS, key=lambda h: h.value_usd)
    stable = sum(h.value_usd for h in data.HOLDINGS if h.symbol == "USDC") / total * 100
    ctx.block(
        {
            "kind": "kv",
            "items": [
                {"label": "Total value", "value": data.usd(total)},
                {"label": "24 h change", "value": f"{change:+.1f} %"},
                {"label": "Largest position", "value": f"{largest.name} ({largest.symbol})"},
                {"label": "Stablecoins", "value": f"{stable:.1f} %"},
            ],
        }
    )
    await ctx.say("Want to rebalance? Try “swap 100 USDC to ETH”.")


async def _market_summary(ctx: TurnContext, text: str) -> None:
    pause = ctx.config.demo_delay
    args = {"period": "7d"}
    async with ctx.tool(
        "get_market_summary", "Reading the week's market", args, seconds=pause
    ) as call:
        call.summary = f"{len(data.HOLDINGS)} assets, 7 days"
    await ctx.say("Here is the week in the sample market.\n")
    ranked = sorted(data.HOLDINGS, key=lambda h: data.WEEK_CHANGE[h.symbol], reverse=True)
    lines = [
        f"- **{h.name}** {data.percent(data.WEEK_CHANGE[h.symbol])}: {data.WEEK_NOTES[h.symbol]}, "
        f"now {data.usd(h.price_usd)}."
        for h in ranked
    ]
    summary = ["### The week in short", "", *lines, "", "*Sample data, not advice.*"]
    ctx.block({"kind": "markdown", "text": "\n".join(summary)})
    # A kind this client does not know yet: it shows the fallback text the gateway sends along.
    changes = [f"{h.symbol} {data.percent(data.WEEK_CHANGE[h.symbol])}" for h in ranked]
    ctx.block(
        {
            "kind": "heatmap",
            "title": "7-day change",
            "cells": [{"label": h.symbol, "value": data.WEEK_CHANGE[h.symbol]} for h in ranked],
            "fallback_text": "Heat map of the 7-day change: " + " · ".join(changes),
        }
    )
    top = ranked[0]
    ctx.block(
        {
            "kind": "link",
            "label": f"{top.name}, the week's top mover",
            "url": data.SITES[top.symbol],
        }
    )
    await ctx.say("Want to hear when prices move? Try “set price alerts”.")


async def _swap(ctx: TurnContext, text: str) -> None:
    match = _SWAP.search(text)
    assert match is not None
    amount, source, target = float(match[1]), match[2].upper(), match[3].upper()
    known = ", ".join(data.PRICES)
    if source not in data.PRICES or target not in data.PRICES:
        await ctx.say(f"I can swap between {known} in this demo.")
        return
    if source == target or amount <= 0:
        await ctx.say("Pick two different assets and an amount above zero.")
        return
    held = next(h.amount for h in data.HOLDINGS if h.symbol == source)
    if amount > held:
        await ctx.say(f"You hold only {data.amount_text(held)} {source}.")
        return
    received, fee = data.quote(amount, source, target)
    pay, get = f"{data.amount_text(amount)} {source}", f"{data.amount_text(received)} {target}"
    args = {"from": source, "to": target, "amount": amount}
    async with ctx.tool("swap_quote", f"Getting a quote for {pay} to {target}", args) as call:
        call.summary = f"{pay} → {get}"
    ctx.block(
        {
            "kind": "kv",
            "items": [
                {"label": "You pay", "value": pay},
                {"label": "You receive (about)", "value": get},
                {"label": "Fee", "value": data.usd(fee)},
                {"label": "Rate", "value": f"1 {target} = {data.usd(data.PRICES[target])}"},
            ],
        }
    )
    answers = await ctx.ask(
        "confirm",
        [
            {
                "text": f"Swap {pay} for about {get}?",
                "options": [
                    {"label": "Confirm", "description": "Send the swap order"},
                    {"label": "Cancel", "description": "Keep your funds as they are"},
                ],
            }
        ],
        asked_by={"agent": "trader", "tool": "swap"},
    )
    if answers is None:
        await ctx.say("No answer in time, so the swap is cancelled. Nothing was moved.")
        return
    if answers[0].labels != ["Confirm"]:
        await ctx.say("Cancelled. Nothing was moved.")
        return
    async with ctx.tool("execute_swap", f"Swapping {pay} to {target}", args) as call:
        call.summary = f"Filled: {get}"
    await ctx.say(f"Done: you swapped {pay} for {get}.")


async def _connect_exchange(ctx: TurnContext, text: str) -> None:
    await ctx.say(
        "To connect your exchange I need a read-only API key. It goes to the gateway's "
        "credential store and never into this chat.\n"
    )
    answers = await ctx.ask(
        "secret",
        [{"text": "Paste your exchange API key (read-only).", "placeholder": "API key"}],
        asked_by={"agent": "connector", "tool": "connect_exchange"},
        write_endpoint=endpoint_for(EXCHANGE_SECRET),
    )
    if answers is None:
        await ctx.say("No key arrived in time, so your exchange is not connected.")
        return
    if answers[0].labels != ["provided"]:
        await ctx.say("No problem: your exchange stays disconnected.")
        return
    async with ctx.tool("verify_exchange_key", "Checking the key", {"scope": "read"}) as call:
        call.summary = "Read-only key accepted"
    await ctx.say("Your exchange is connected (read-only).")


async def _which_account(ctx: TurnContext, text: str) -> None:
    answers = await ctx.ask(
        "select",
        [
            {
                "text": "Which account should I use?",
                "options": [{"label": name, "description": what} for name, what in data.ACCOUNTS],
                "multi": False,
            }
        ],
        asked_by={"agent": "planner"},
    )
    if answers is None:
        await ctx.say("No answer in time; I'll keep using the Main account.")
        return
    await ctx.say(f"Using the {answers[0].text} account from now on.")


async def _price_alerts(ctx: TurnContext, text: str) -> None:
    watched = [h for h in data.HOLDINGS if h.symbol != "USDC"]  # a stablecoin hardly moves
    move = data.ALERT_MOVE
    answers = await ctx.ask(
        "select",
        [
            {
                "text": f"Which assets should I watch? I'll alert you when one moves {move:.0f} % "
                "from today's price.",
                "options": [
                    {
                        "label": f"{h.name} ({h.symbol})",
                        "description": f"now {data.usd(h.price_usd)}",
                    }
                    for h in watched
                ],
                "multi": True,
            }
        ],
        asked_by={"agent": "planner", "tool": "price_alerts"},
    )
    if answers is None:
        await ctx.say("No answer in time, so no alerts were set.")
        return
    chosen = [h for h in watched if f"{h.name} ({h.symbol})" in answers[0].labels]
    args = {"symbols": [h.symbol for h in chosen], "move_percent": move}
    async with ctx.tool("set_price_alerts", "Setting price alerts", args) as call:
        call.summary = f"{len(chosen)} alert{'s' if len(chosen) > 1 else ''} set"
    ctx.block(
        {
            "kind": "kv",
            "items": [
                {
                    "label": f"{h.name} ({h.symbol})",
                    "value": f"below {data.usd(h.price_usd * (1 - move / 100))} or above "
                    f"{data.usd(h.price_usd * (1 + move / 100))}",
                }
                for h in chosen
            ],
        }
    )
    await ctx.say(f"Alerts set for {data.listed([h.name for h in chosen])}.")


async def _name_watchlist(ctx: TurnContext, text: str) -> None:
    answers = await ctx.ask(
        "input",
        [{"text": "What should your watchlist be called?", "placeholder": "e.g. Layer 1s"}],
        asked_by={"agent": "planner"},
    )
    if answers is None:
        await ctx.say("No answer in time; the watchlist keeps its name “My watchlist”.")
        return
    name = " ".join(answers[0].text.split())[:WATCHLIST_MAX]
    await ctx.say(f"Your watchlist is now called “{name}”.")


async def _plan_week(ctx: TurnContext, text: str) -> None:
    steps = data.WEEK_PLAN
    ctx.todos([(step, False) for step in steps])
    await ctx.say("Here is a plan for your week; I'll tick off what I can prepare now.\n")
    for done in range(1, len(steps) + 1):
        await ctx.sleep(ctx.config.demo_delay * 3)
        ctx.todos([(step, index < done) for index, step in enumerate(steps)])
    await ctx.say(f"All {len(steps)} steps are prepared.")


async def _research(ctx: TurnContext, text: str) -> None:
    match = _RESEARCH.match(text)
    topic = " ".join(match[1].split())[:80] if match else "the market"
    ctx.open_interjections()
    async with ctx.tool("search_news", f"Searching news about {topic}", {"query": topic}):
        await ctx.sleep(ctx.config.slow_delay * 3)
    await ctx.say(
        f"Here is what the sample data says about {topic}. Trading volume rose over the week "
        "while the price stayed in a narrow range. Sentiment in the sample news is mixed: "
        "some expect a breakout, others a pause. Fees on the network stayed low. "
        "This is demo data, not advice.",
        delay=ctx.config.slow_delay,
    )
    ctx.close_interjections()
    if ctx.turn.interjections:
        heard = "; ".join(f"“{item}”" for item in ctx.turn.interjections)
        await ctx.say(f"\nYou added {heard}: I kept that in mind.")


async def _attachments_only(ctx: TurnContext, text: str) -> None:
    await ctx.say("I can't look inside files in this demo, but they are stored with the chat.")


async def _help(ctx: TurnContext, text: str) -> None:
    await ctx.say(HELP)


def _intent(text: str) -> Handler:
    lower = text.lower()
    if _SWAP.search(text):
        return _swap
    if "exchange" in lower and "connect" in lower:
        return _connect_exchange
    if "alert" in lower:
        return _price_alerts
    if "which account" in lower:
        return _which_account
    if "watchlist" in lower and "name" in lower:
        return _name_watchlist
    if "plan" in lower and "week" in lower:
        return _plan_week
    if _RESEARCH.match(text):
        return _research
    if "market" in lower or "news" in lower:
        return _market_summary
    if "portfolio" in lower or "holdings" in lower or "balance" in lower:
        return _portfolio
    return _help


async def answer(ctx: TurnContext) -> None:
    """Answer the turn's message (attachments were acknowledged before)."""
    handler = _intent(ctx.message)
    if handler is _help and ctx.turn.request.attachments:
        handler = _attachments_only
    await handler(ctx, ctx.message)
