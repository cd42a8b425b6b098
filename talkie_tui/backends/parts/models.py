"""A model (and reasoning effort) chosen per message (`capabilities.models`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

__all__ = ["ChoosesModel", "ModelChoice", "ModelList", "ReasoningEffort"]

ReasoningEffort = Literal["low", "medium", "high"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """A model the server offers for a message."""

    id: str
    label: str
    reasoning: bool = False  # takes a reasoning effort


@dataclass(frozen=True, slots=True)
class ModelList:
    """The models offered, and the server's default (which a choice never changes)."""

    models: tuple[ModelChoice, ...]
    default: str | None = None


@runtime_checkable
class ChoosesModel(Protocol):
    """A model (and reasoning effort) chosen per message (`capabilities.models`)."""

    async def models(self) -> ModelList:
        """The models the server offers now."""
        ...
