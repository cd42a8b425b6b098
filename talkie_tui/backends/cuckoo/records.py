"""A hub's wire record copied into a model object of `backends.parts` (the fields of the same
name), so that no wire record reaches the UI."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar

__all__ = ["model_of"]

T = TypeVar("T")


def model_of(kind: type[T], record: object, **given: Any) -> T:
    """A `kind` (a dataclass) with each field from `given`, else from `record`'s attribute."""
    names = [f.name for f in fields(kind)]  # type: ignore[arg-type]
    return kind(**{name: given[name] if name in given else getattr(record, name) for name in names})
