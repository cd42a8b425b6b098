"""The models the gateway offers (`GET /v1/llm/available-models`) and a turn's choice of them."""

from __future__ import annotations

from typing import Any

from talkie_tui.devserver.minara.errors import ApiError

MODELS: list[dict[str, Any]] = [
    {"id": "minara-fast", "label": "Minara Fast"},
    {"id": "minara-pro", "label": "Minara Pro", "reasoning": True},
]
DEFAULT_MODEL = "minara-fast"
REASONING_EFFORTS = ("low", "medium", "high")


def available_models() -> dict[str, Any]:
    """The body of `GET /v1/llm/available-models`."""
    return {"models": [dict(model) for model in MODELS], "default": DEFAULT_MODEL}


def check_choice(model: str | None, reasoning_effort: str | None) -> None:
    """400 `invalid_model` for an unknown model or an effort the (chosen or default) model lacks."""
    chosen = model if model is not None else DEFAULT_MODEL
    entry = next((item for item in MODELS if item["id"] == chosen), None)
    if entry is None:
        known = ", ".join(item["id"] for item in MODELS)
        raise ApiError(400, "invalid_model", f"Unknown model {chosen!r} (available: {known}).")
    if reasoning_effort is None:
        return
    if reasoning_effort not in REASONING_EFFORTS:
        raise ApiError(
            400,
            "invalid_model",
            f"reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}.",
        )
    if not entry.get("reasoning", False):
        raise ApiError(400, "invalid_model", f"Model {chosen!r} does not take a reasoning_effort.")
