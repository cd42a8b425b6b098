"""Asking what a thing is without importing the module of the class asked about."""

from __future__ import annotations

import sys

__all__ = ["is_loaded_instance"]


def is_loaded_instance(thing: object, module: str, name: str) -> bool:
    """`isinstance(thing, module.name)`, False while `module` is not imported: no instance of
    its classes can exist before it is, and asking must not import it (a start imports only
    what its run needs, issue 24)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(thing, getattr(loaded, name))
