"""Key bindings in the UI's language: Textual shows a binding's description as written."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

from textual.binding import ActiveBinding, Binding
from textual.screen import Screen
from typing_extensions import TypeVar

from talkie_tui.i18n import _, current_language


@cache
def _translated(binding: Binding, language: str) -> Binding:
    # `language` is part of the cache key: the same binding reads differently after a switch.
    return replace(
        binding,
        description=_(binding.description) if binding.description else "",
        tooltip=_(binding.tooltip) if binding.tooltip else "",
    )


# A default: the subclasses name their result in their `Screen` base, not here.
ResultType = TypeVar("ResultType", default=Any)


class LocalizedBindings(Screen[ResultType]):
    """A screen whose footer, key panel and help read the bindings in the current language.

    Class-level BINDINGS are written before the language is known, in English marked with
    `N_()`; every consumer of bindings (Footer, KeyPanel) reads them through `active_bindings`.
    """

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The screen's active bindings with their descriptions translated."""
        language = current_language()
        return {
            key: active._replace(
                binding=_translated(active.binding, language),
                tooltip=_(active.tooltip) if active.tooltip else "",
            )
            for key, active in super().active_bindings.items()
        }
