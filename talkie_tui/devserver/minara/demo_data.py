"""The demo agent's sample portfolio: fixed holdings and prices, so every answer is the same."""

from __future__ import annotations

from dataclasses import dataclass

SWAP_FEE = 0.003  # 0.3 %


@dataclass(frozen=True)
class Holding:
    """One asset of the sample portfolio."""

    symbol: str
    name: str
    amount: float
    price_usd: float
    change_24h: float  # percent

    @property
    def value_usd(self) -> float:
        """The holding's value in USD."""
        return self.amount * self.price_usd


HOLDINGS = [
    Holding("BTC", "Bitcoin", 0.42, 64_250.0, 1.8),
    Holding("ETH", "Ether", 3.1, 3_205.0, -0.6),
    Holding("SOL", "Solana", 25.0, 148.4, 3.2),
    Holding("USDC", "USD Coin", 1_250.0, 1.0, 0.0),
]
PRICES = {holding.symbol: holding.price_usd for holding in HOLDINGS}
# The portfolio's value at the close of the last seven days, oldest first (USD).
WEEK = [
    ("Mon", 40_120.0),
    ("Tue", 40_980.0),
    ("Wed", 39_760.0),
    ("Thu", 41_310.0),
    ("Fri", 42_020.0),
    ("Sat", 41_340.0),
    ("Sun", 41_880.5),
]
# Each asset's change over the last seven days (percent), and what moved it (demo words).
WEEK_CHANGE = {"BTC": 4.1, "ETH": -2.3, "SOL": 9.6, "USDC": 0.0}
WEEK_NOTES = {
    "BTC": "closed the week near its high",
    "ETH": "slipped while fees on its network stayed low",
    "SOL": "led the week on rising network activity",
    "USDC": "held its peg",
}
# Each asset's own website: the market summary's link block.
SITES = {
    "BTC": "https://bitcoin.org",
    "ETH": "https://ethereum.org",
    "SOL": "https://solana.com",
    "USDC": "https://www.circle.com/usdc",
}
# A price alert fires when the price moves this far from today's, either way (percent).
ALERT_MOVE = 5.0
ACCOUNTS = [
    ("Main", "Spot wallet for everyday trades"),
    ("Savings", "Long-term holdings, no trading"),
    ("Trading", "Exchange sub-account for active positions"),
]
WEEK_PLAN = [
    "Review the portfolio allocation",
    "Set a price alert for ETH at 3,400 USD",
    "Move 200 USDC to the savings account",
    "Read the weekly market summary",
]


def usd(value: float) -> str:
    """`12,345.67 USD`."""
    return f"{value:,.2f} USD"


def total_value() -> float:
    """The portfolio's value now."""
    return sum(holding.value_usd for holding in HOLDINGS)


def quote(amount: float, source: str, target: str) -> tuple[float, float]:
    """(what `amount` of `source` buys of `target` after the fee, the fee in USD)."""
    gross_usd = amount * PRICES[source]
    fee_usd = gross_usd * SWAP_FEE
    return (gross_usd - fee_usd) / PRICES[target], fee_usd


def amount_text(value: float) -> str:
    """An amount without needless digits: 0.031107 ETH, 100 USDC."""
    text = f"{value:,.6f}".rstrip("0").rstrip(".")
    return text or "0"


def percent(value: float) -> str:
    """`+4.1 %`, `-2.3 %`, `+0.0 %` (as the portfolio's table writes a change)."""
    return f"{value:+.1f} %"


def listed(names: list[str]) -> str:
    """`A`, `A and B`, `A, B and C`."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"
