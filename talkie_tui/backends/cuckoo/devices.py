"""A hub's records of the person's devices and storage, as the model objects of the
`Devices` part (`SignedInDevice`, `StorageUse`): no wire record reaches a screen."""

from __future__ import annotations

from talkie_tui.backends.parts.devices import SignedInDevice, StorageUse
from talkie_tui.protocol.cuckoo.models import Device, Storage

__all__ = ["as_device", "as_storage"]


def as_device(device: Device) -> SignedInDevice:
    """A hub's device record (it calls the last use `last_seen_at`)."""
    return SignedInDevice(device.id, device.name, device.last_seen_at, device.current)


def as_storage(storage: Storage) -> StorageUse:
    """A hub's storage record: `media` with its bytes, `messages` with how long they are
    kept."""
    media, messages = storage.media, storage.messages
    return StorageUse(media.used_bytes, media.budget_bytes, messages.kept_days, messages.kept_since)
