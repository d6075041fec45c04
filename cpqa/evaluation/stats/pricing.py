"""Claude list prices, the one place evaluation cost estimates come from.

US dollars per million tokens (input, output), from Anthropic's public price list (2025). A model id matches
the longest table key it starts with, so dated ids ("claude-sonnet-4-5-20250929") find their family.
"""

from __future__ import annotations

from pydantic import BaseModel

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
}


class Cost(BaseModel):
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    usd: float | None = None  # None when the model is not in the price table


def price_for(model: str) -> tuple[float, float] | None:
    matches = [key for key in PRICES_PER_MTOK if model.startswith(key)]
    return PRICES_PER_MTOK[max(matches, key=len)] if matches else None


def estimate_cost(model: str, input_tokens: int, output_tokens: int, calls: int = 0) -> Cost:
    price = price_for(model)
    usd = None if price is None else round((input_tokens * price[0] + output_tokens * price[1]) / 1e6, 4)
    return Cost(model=model, input_tokens=input_tokens, output_tokens=output_tokens, calls=calls, usd=usd)
