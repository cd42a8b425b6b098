"""The key bar at the bottom, without Textual's slow leak of old keys, and without rebuilding
it when only whether a key can be used changed."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["TalkieFooter"]


class TalkieFooter(Footer):
    """Textual's Footer, forgetting the keys it replaced.

    Footer rebuilds its keys whenever the bindings change (every run, every focus change), and
    each key watches the footer's `compact` through `data_bind`. Textual drops such a watcher
    only when the watched value changes, which `compact` never does, so every key ever shown
    stayed reachable (about 8 widgets per run: Textual issue #6666). After each rebuild the
    watchers of removed keys are dropped here. `benchmarks/soak.py --tui` measures the effect.
    """

    async def recompose(self) -> None:
        """Rebuild the keys, then forget the watchers of the keys that were removed."""
        await super().recompose()
        # Textual keeps watchers in this attribute of the watched object (reactive.py `_watch`).
        watchers: dict[str, list[tuple[object, object]]] = getattr(self, "__watchers", {})
        for watching in watchers.values():
            watching[:] = [
                (node, callback)
                for node, callback in watching
                if not getattr(node, "_closing", False) and getattr(node, "is_attached", True)
            ]

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """The same keys, some now usable or not (Esc's "Stop answer" as an answer starts and
        ends): marked in place. Rebuilt, the footer took a recompose and a layout, 20-40 ms,
        a visible stall in the first frames of every answer."""
        if not (self._bindings_ready and self.is_attached and screen is self.screen):
            super().bindings_changed(screen)
            return
        if not self._mark_in_place(screen):
            super().bindings_changed(screen)

    def _mark_in_place(self, screen: Screen[Any]) -> bool:
        """Set each key's usability from the screen's bindings; False when the keys differ
        from the ones shown (they are then rebuilt)."""
        wanted: dict[str, tuple[str, str, bool]] = {}  # by action, its first binding (as Footer)
        for _node, binding, enabled, _tooltip in screen.active_bindings.values():
            if binding.show and binding.action not in wanted:
                wanted[binding.action] = (binding.key, binding.description, enabled)
        palette = screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        keys = [key for key in self.query(FooterKey) if not key.has_class("-command-palette")]
        shown = [(key.action, key.key, key.description) for key in keys]
        if any(key.has_class("-grouped") for key in keys) or shown != [
            (action, key, description) for action, (key, description, _) in wanted.items()
        ]:
            return False
        for key in keys:
            self._mark(key, wanted[key.action][2])
        if palette is not None:
            for key in self.query(".-command-palette").results(FooterKey):
                self._mark(key, palette[2])
        return True

    @staticmethod
    def _mark(key: FooterKey, enabled: bool) -> None:
        if key._disabled == (not enabled):
            return
        key._disabled = not enabled  # what Textual's FooterKey reads on a click
        key.set_class(not enabled, "-disabled")
