"""The person's signed-in devices and what the server keeps of them (`capabilities.devices`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

__all__ = ["Devices", "SignedInDevice", "StorageUse"]


@dataclass(frozen=True, slots=True)
class SignedInDevice:
    """One device signed in as the person: its name, when it was last used, and whether it is
    the one asking (`current`)."""

    id: str
    name: str
    last_used: datetime | None = None
    current: bool = False


@dataclass(frozen=True, slots=True)
class StorageUse:
    """What the server keeps of the person: files' bytes of their budget, and messages kept
    for `kept_days` (since `kept_since`)."""

    used_bytes: int = 0
    budget_bytes: int = 0
    kept_days: int = 0
    kept_since: datetime | None = None


@runtime_checkable
class Devices(Protocol):
    """The person's signed-in devices, listed and signed out (`capabilities.devices`)."""

    async def devices(self) -> Sequence[SignedInDevice]:
        """Every signed-in device of the person (`current`: this one)."""
        ...

    async def storage(self) -> StorageUse:
        """How much of the person's file budget is used, and how long messages are kept."""
        ...

    async def end_device(self, device_id: str) -> None:
        """Sign out one device (another than this one)."""
        ...

    async def end_other_devices(self) -> None:
        """Sign out every device but this one."""
        ...
