"""Importing on first use: a package's names from their modules when first asked for, and
asking what a thing is without importing the module of the class asked about."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["is_loaded_instance", "names_on_first_use"]


def is_loaded_instance(thing: object, module: str, name: str) -> bool:
    """`isinstance(thing, module.name)`, False while `module` is not imported: no instance of
    its classes can exist before it is, and asking must not import it (a start imports only
    what its run needs, issue 24)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(thing, getattr(loaded, name))


def names_on_first_use(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's `__getattr__` that gives each name of `homes` (name -> module) from its
    module, imported then if it was not yet: importing the package imports none of them."""

    def name_from_home(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return name_from_home
